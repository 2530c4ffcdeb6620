/**
 * The SQL editor: CodeMirror 6 with DuckDB-flavoured SQL highlighting,
 * completion of the trace's tables and columns (with queries/schema.sql's
 * descriptions) and of the detectors' ss_* macros, Ctrl/Cmd+Enter to run,
 * and the error of the last run marked where it happened.
 */
import { useEffect, useRef } from 'react';
import { EditorView, basicSetup } from 'codemirror';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { keymap, placeholder } from '@codemirror/view';
import { sql, PostgreSQL, type SQLNamespace } from '@codemirror/lang-sql';
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { setDiagnostics } from '@codemirror/lint';
import type { Catalog } from './api.ts';

export interface EditorError {
  message: string;
  /** Offset in the text, or null (then the whole first line is marked). */
  position: number | null;
}

interface Props {
  value: string;
  onChange(v: string): void;
  onRun(): void;
  catalog: Catalog | null;
  error: EditorError | null;
}

function namespaceOf(catalog: Catalog): SQLNamespace {
  const ns: Record<string, SQLNamespace> = {};
  for (const t of catalog.tables) {
    const cols: Completion[] = t.columns.map((c) => ({
      label: c.name,
      type: 'property',
      detail: c.type,
      info: c.description,
    }));
    ns[t.name] = {
      self: {
        label: t.name,
        type: t.kind === 'view' ? 'type' : 'class',
        detail: t.typed ? 'event table' : t.kind,
        info: t.description,
      },
      children: cols,
    };
  }
  return ns;
}

function macroSource(catalog: Catalog) {
  const options: Completion[] = catalog.macros.map((m) => ({
    label: m.name,
    type: 'function',
    detail: `(${m.params})`,
    info: m.description,
    apply: `${m.name}(`,
  }));
  return (ctx: CompletionContext): CompletionResult | null => {
    const w = ctx.matchBefore(/ss_\w*/);
    if (!w || (w.from === w.to && !ctx.explicit)) return null;
    return { from: w.from, options, validFor: /^\w*$/ };
  };
}

function languageFor(catalog: Catalog | null) {
  const lang = sql({
    dialect: PostgreSQL,
    schema: catalog ? namespaceOf(catalog) : undefined,
    upperCaseKeywords: false,
  });
  return catalog ? [lang, lang.language.data.of({ autocomplete: macroSource(catalog) })] : [lang];
}

export function SqlEditor({ value, onChange, onRun, catalog, error }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onRunRef = useRef(onRun);
  onRunRef.current = onRun;
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  const language = useRef(new Compartment());

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  onRunRef.current();
                  return true;
                },
              },
            ]),
          ),
          basicSetup,
          language.current.of(languageFor(null)),
          placeholder('SELECT name, count(*) FROM ftrace_event GROUP BY 1 ORDER BY 2 DESC   — Ctrl+Enter runs'),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChangeRef.current(u.state.doc.toString());
          }),
          EditorView.theme({
            '&': { height: '100%', fontSize: '12.5px' },
            '.cm-scroller': { fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace" },
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // One editor for the component's life; text flows out through onChange, in through the effect below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // The trace's schema arrives after the editor: completion is reconfigured in place (the text, cursor and focus stay).
  useEffect(() => {
    view.current?.dispatch({ effects: language.current.reconfigure(languageFor(catalog)) });
  }, [catalog]);

  // Text set from outside (history, saved queries).
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value)
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    if (!error) {
      v.dispatch(setDiagnostics(v.state, []));
      return;
    }
    const len = v.state.doc.length;
    let from = error.position ?? 0;
    from = Math.max(0, Math.min(from, len));
    // Mark the word at the position (or the first line when DuckDB gave no place).
    const line = v.state.doc.lineAt(from);
    const rest = v.state.sliceDoc(from, line.to);
    const word = /^[\w$."']+/.exec(rest)?.[0].length ?? 1;
    const to = error.position === null ? line.to : Math.min(len, from + Math.max(1, word));
    v.dispatch(
      setDiagnostics(v.state, [
        {
          from: error.position === null ? line.from : from,
          to: Math.max(to, from + (len > from ? 1 : 0)),
          severity: 'error',
          message: error.message,
        },
      ]),
    );
  }, [error]);

  return <div className="sql-editor" ref={host} data-testid="sql-editor" data-schema={catalog ? 'ready' : 'loading'} />;
}
