/**
 * The area a trace file is dropped on or chosen from, shared by the start
 * page and a share link's missing-trace page: the drag highlight, keyboard
 * activation (Enter/Space, as for a button) and the hidden file input.
 * The page keeps the input's ref, because its upload status offers
 * "choose another file" outside the zone.
 */
import { useState, type ReactNode, type RefObject } from 'react';

export interface DropZoneProps {
  testId: string;
  inputTestId: string;
  /** The hidden input, so the page can open the file chooser from elsewhere. */
  inputRef: RefObject<HTMLInputElement | null>;
  /** Whether several files may be dropped or chosen at once. */
  multiple?: boolean;
  /** Dropped or chosen files, in the order given (never empty). */
  onFiles(files: File[]): void;
  /** A click or Enter/Space on the zone: the page's way of choosing a file. */
  onChoose(): void;
  children: ReactNode;
}

export function DropZone({ testId, inputTestId, inputRef, multiple, onFiles, onChoose, children }: DropZoneProps) {
  const [dragging, setDragging] = useState(false);
  const hold = (e: React.DragEvent) => {
    // Without preventDefault the browser opens the dropped file itself.
    e.preventDefault();
    setDragging(true);
  };
  const take = (list: FileList | null | undefined) => {
    const files = Array.from(list ?? []);
    if (files.length > 0) onFiles(multiple ? files : files.slice(0, 1));
  };
  return (
    <div
      className={`drop-zone${dragging ? ' dragging' : ''}`}
      data-testid={testId}
      onDragOver={hold}
      onDragEnter={hold}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        take(e.dataTransfer?.files);
      }}
      onClick={onChoose}
      role="button"
      tabIndex={0}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') onChoose();
      }}
    >
      {children}
      <input
        ref={inputRef}
        type="file"
        multiple={multiple}
        data-testid={inputTestId}
        style={{ display: 'none' }}
        onChange={(e) => {
          take(e.target.files);
          // Cleared so that choosing the same file again still fires a change.
          e.target.value = '';
        }}
      />
    </div>
  );
}
