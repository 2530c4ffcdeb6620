/** Draws links between two points on (possibly different) tracks as curved arrows. */
export interface Arrow {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  emphasis: boolean;
}

export function drawArrows(ctx: CanvasRenderingContext2D, arrows: Arrow[], color: string, dim: boolean): void {
  ctx.lineWidth = 1;
  for (const a of arrows) {
    ctx.strokeStyle = a.emphasis ? '#1a73e8' : color;
    ctx.fillStyle = ctx.strokeStyle;
    ctx.globalAlpha = dim && !a.emphasis ? 0.25 : 0.9;
    ctx.lineWidth = a.emphasis ? 2 : 1;
    const mx = (a.x0 + a.x1) / 2;
    ctx.beginPath();
    ctx.moveTo(a.x0, a.y0);
    if (a.y0 === a.y1) ctx.quadraticCurveTo(mx, a.y0 - 10, a.x1, a.y1);
    else ctx.bezierCurveTo(mx, a.y0, mx, a.y1, a.x1, a.y1);
    ctx.stroke();
    // Arrow head pointing along the last segment.
    const ang = a.y0 === a.y1 ? Math.atan2(10, a.x1 - mx) : Math.atan2(0, a.x1 - mx || 1);
    ctx.beginPath();
    ctx.moveTo(a.x1, a.y1);
    ctx.lineTo(a.x1 - 6 * Math.cos(ang - 0.4), a.y1 - 6 * Math.sin(ang - 0.4));
    ctx.lineTo(a.x1 - 6 * Math.cos(ang + 0.4), a.y1 - 6 * Math.sin(ang + 0.4));
    ctx.closePath();
    ctx.fill();
  }
  ctx.globalAlpha = 1;
}
