/** Colours: one stable hue per task, fixed colours per scheduling state. */
const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#59a14f',
  '#b07aa1',
  '#76b7b2',
  '#edc948',
  '#e15759',
  '#9c755f',
  '#ff9da7',
  '#7f9fbf',
  '#2f7ebc',
  '#c9782c',
  '#3e8e4f',
  '#8f5ea2',
  '#3f9c96',
  '#c4a32a',
  '#c2413e',
  '#7b5a46',
  '#d9779a',
  '#5b7fa3',
];

export function taskColor(utid: number | null): string {
  if (utid === null || utid < 0) return '#9aa0a6';
  if (utid === 0) return '#d5d8dc'; // idle
  // Knuth multiplicative hash spreads neighbouring utids over the palette.
  return PALETTE[Math.abs(Math.imul(utid, 2654435761) >>> 0) % PALETTE.length]!;
}

export const STATE_COLOR: Record<string, string> = {
  Running: '#188038',
  R: '#8fd19e',
  'R+': '#8fd19e',
  D: '#e8710a',
  S: '#e8eaed',
  I: '#e8eaed',
  T: '#a142f4',
  t: '#a142f4',
  X: '#5f6368',
  Z: '#5f6368',
  P: '#c5221f',
};

export function stateColor(state: string | null): string {
  if (!state) return '#dadce0';
  return (
    STATE_COLOR[state] ?? (state.startsWith('D') ? STATE_COLOR.D! : state.startsWith('R') ? STATE_COLOR.R! : '#bdc1c6')
  );
}

export function stateLabel(state: string | null): string {
  switch (state) {
    case 'Running':
      return 'Running';
    case 'R':
    case 'R+':
      return 'Runnable';
    case 'D':
      return 'Uninterruptible sleep';
    case 'S':
      return 'Sleeping';
    case 'I':
      return 'Idle';
    default:
      return state ?? '';
  }
}

export const CATEGORY_COLOR: Record<string, string> = {
  shrinker: '#c2185b',
  direct_reclaim: '#d93025',
  memcg_reclaim: '#e37400',
  workqueue: '#1a73e8',
};

export function categoryColor(category: string | null, name: string | null): string {
  if (category && CATEGORY_COLOR[category]) return CATEGORY_COLOR[category]!;
  return taskColor(hashString(name ?? category ?? ''));
}

export function hashString(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return Math.abs(h) + 1;
}

export const HIGHLIGHT = '#1a73e8';
export const SELECTED_OUTLINE = '#202124';
export const DIM_ALPHA = 0.28;
