/** The time ruler: tick marks and labels. */
import type { Tick } from '../time_axis/ruler.ts';

export function drawRuler(ctx: CanvasRenderingContext2D, width: number, height: number, ticks: Tick[]): void {
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = '#f8f9fa';
  ctx.fillRect(0, 0, width, height);
  ctx.strokeStyle = '#9aa0a6';
  ctx.fillStyle = '#3c4043';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of ticks) {
    const x = Math.round(t.x) + 0.5;
    ctx.moveTo(x, 0);
    ctx.lineTo(x, height);
  }
  ctx.stroke();
  for (const t of ticks) ctx.fillText(t.label, Math.round(t.x) + 4, 4);
  ctx.strokeStyle = '#dadce0';
  ctx.beginPath();
  ctx.moveTo(0, height - 0.5);
  ctx.lineTo(width, height - 0.5);
  ctx.stroke();
}

/** Faint vertical grid lines across the tracks at the ruler's ticks. */
export function drawGrid(ctx: CanvasRenderingContext2D, height: number, ticks: Tick[]): void {
  ctx.strokeStyle = 'rgba(60, 64, 67, 0.08)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of ticks) {
    const x = Math.round(t.x) + 0.5;
    ctx.moveTo(x, 0);
    ctx.lineTo(x, height);
  }
  ctx.stroke();
}
