/**
 * "This trace's findings changed" (a detector was saved from the query
 * page): the open trace view fetches its findings again.
 */
const bus = new EventTarget();

export function findingsChanged(traceId: string): void {
  bus.dispatchEvent(new CustomEvent('changed', { detail: traceId }));
}

export function onFindingsChanged(traceId: string, f: () => void): () => void {
  const l = (e: Event) => {
    if ((e as CustomEvent<string>).detail === traceId) f();
  };
  bus.addEventListener('changed', l);
  return () => bus.removeEventListener('changed', l);
}
