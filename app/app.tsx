/** The app: the start page, the open trace named by the URL (`?trace=<sha256>`), a comparison (`?compare=ID,ID`), or a fleet dataset (`?fleet=NAME`). */
import { CompareView } from './compare/compare_view.tsx';
import { useCompareRoute } from './compare/compare_route.ts';
import { FleetView } from './fleet/fleet_view.tsx';
import { useFleetRoute } from './fleet/fleet_route.ts';
import { searchProblems } from './notes/link_check.ts';
import { notesModel } from './notes/notes_model.ts';
import { LinkBanner, ToastView } from './notes/notes_ui.tsx';
import { StartPage } from './panels/start_page.tsx';
import { TraceView } from './panels/trace_view.tsx';
import { useView, viewStore } from './state/view_store.ts';
import { linkModel } from './links/link_state.ts';

// What the opening link could not say (bad trace id, t0 > t1, garbage selection...): a banner, not a blank page.
if (typeof location !== 'undefined') {
  notesModel.warn(searchProblems(location.search));
  // The notes and trace facts a share link carries in its fragment (app/links/link_state.ts).
  linkModel.read(location.hash, viewStore.get().trace, (message) => notesModel.warn([message]));
}

export function App() {
  const trace = useView((v) => v.trace);
  const compare = useCompareRoute();
  const fleet = useFleetRoute();
  return (
    <>
      <LinkBanner />
      {fleet ? (
        <FleetView route={fleet} />
      ) : compare ? (
        <CompareView route={compare} />
      ) : trace ? (
        <TraceView key={trace} traceId={trace} />
      ) : (
        <StartPage />
      )}
      <ToastView />
    </>
  );
}
