// Yaw angles, and a box's own frame (x to its front, y to its left) <-> the world's, on the
// ground plane.
export function wrapAngle(a) {
  const t = Math.atan2(Math.sin(a), Math.cos(a));
  return t <= -Math.PI ? Math.PI : t;
}

export function toWorld(b, lx, ly) {
  const c = Math.cos(b.yaw), s = Math.sin(b.yaw);
  return { x: b.cx + lx * c - ly * s, y: b.cy + lx * s + ly * c };
}

export function toLocal(b, x, y) {
  const c = Math.cos(b.yaw), s = Math.sin(b.yaw), dx = x - b.cx, dy = y - b.cy;
  return { x: dx * c + dy * s, y: -dx * s + dy * c };
}
