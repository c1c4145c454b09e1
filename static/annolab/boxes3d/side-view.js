// The side view of the selected box: its slab of points, its handles, and drags that set
// its base, height and length.
import { MIN_SIZE, HANDLE_PX, SELECTED } from "./constants.js";
import { toWorld } from "./geometry.js";
import { gettext } from "../i18n.js";

export const sideViewMethods = {
  // The selected box seen from its right-hand side (its front to the right), cut to a slab
  // as wide as the box so that only its own points show: where its base and top belong.
  // While a drag in this view lasts, its frame stays where the drag began.
  sideFrame() {
    if (this.sideDrag) return this.sideDrag.frame;
    if (this.drag && this.drag.sideFrame) return this.drag.sideFrame;
    const b = this.selected();
    const W = this.side.clientWidth, H = this.side.clientHeight;
    if (!b || !W || !H) return null;
    const m = Math.max((b.l + 3) / W, (b.h + 2.4) / H);
    return { cx: b.cx, cy: b.cy, cz: b.cz, yaw: b.yaw, w: b.w, m, W, H };
  },

  // The side view's pixel <-> metre mapping on its canvas, kept as current as the table.
  markSide() {
    const f = this.sideFrame();
    this.side.dataset.metresPerPixel = f ? String(f.m) : "";
    this.side.dataset.centreZ = f ? String(f.cz) : "";
    return f;
  },

  sidePixel(f, u, z) {
    return { px: f.W / 2 + u / f.m, py: f.H / 2 - (z - f.cz) / f.m };
  },

  sidePoint(f, px, py) {
    return { u: (px - f.W / 2) * f.m, z: f.cz + (f.H / 2 - py) * f.m };
  },

  renderSide() {
    if (!this.sideGl.clientWidth) return;
    const f = this.markSide();
    if (!f) {
      this.sideRenderer.clear();
      return;
    }
    const D = 100, c = Math.cos(f.yaw), s = Math.sin(f.yaw), cam = this.sideCamera;
    cam.position.set(f.cx + s * D, f.cy - c * D, f.cz); // on the box's right, looking left
    cam.lookAt(f.cx, f.cy, f.cz);
    cam.left = (-f.W / 2) * f.m;
    cam.right = (f.W / 2) * f.m;
    cam.top = (f.H / 2) * f.m;
    cam.bottom = (-f.H / 2) * f.m;
    cam.near = D - f.w / 2 - 0.3;
    cam.far = D + f.w / 2 + 0.3;
    cam.updateProjectionMatrix();
    this.layers.side.render(this.scene, this.boxScene, cam, this.cloudVersion);
  },

  sideHandles(f, b) {
    // b in the frame: its centre along the heading and its base and top
    const u = (b.cx - f.cx) * Math.cos(f.yaw) + (b.cy - f.cy) * Math.sin(f.yaw);
    const base = b.cz - b.h / 2, top = b.cz + b.h / 2, mid = b.cz;
    return [
      { kind: "top", ...this.sidePixel(f, u, top) },
      { kind: "bottom", ...this.sidePixel(f, u, base) },
      { kind: "front", ...this.sidePixel(f, u + b.l / 2, mid) },
      { kind: "back", ...this.sidePixel(f, u - b.l / 2, mid) },
    ];
  },

  drawSideOverlay() {
    if (!this.side.clientWidth) return;
    const ctx = this.overlayContext(this.side);
    const f = this.sideFrame(), b = this.selected();
    if (!f || !b) {
      ctx.fillStyle = "#8c97a8";
      ctx.textAlign = "center";
      ctx.fillText(gettext("Select a box to see it from the side"), this.side.clientWidth / 2, this.side.clientHeight / 2);
      ctx.textAlign = "left";
      return;
    }
    const hs = this.sideHandles(f, b);
    for (const hd of hs) {
      const active = this.sideHover === hd.kind;
      ctx.fillStyle = active ? SELECTED : "#ffffff";
      ctx.strokeStyle = "#0f131a";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.rect(hd.px - 4.5, hd.py - 4.5, 9, 9);
      ctx.fill();
      ctx.stroke();
    }
    const [top, bottom, front] = hs;
    this.tag(ctx, `height ${b.h.toFixed(2)} m`, top.px + 10, top.py - 12, SELECTED);
    this.tag(ctx, `base ${(b.cz - b.h / 2).toFixed(2)} m`, bottom.px + 10, bottom.py + 12, SELECTED);
    ctx.fillStyle = "#aeb8c8";
    ctx.fillText(gettext("front") + " ▸", Math.min(front.px + 8, this.side.clientWidth - 48), front.py);
  },

  sideHit(px, py) {
    const f = this.sideFrame(), b = this.selected();
    if (!f || !b) return null;
    let best = null, bestDistance = HANDLE_PX;
    for (const hd of this.sideHandles(f, b)) {
      const d = Math.hypot(hd.px - px, hd.py - py);
      if (d <= bestDistance) [best, bestDistance] = [hd.kind, d];
    }
    if (best) return best;
    const [top, bottom, front, back] = this.sideHandles(f, b);
    if (px >= back.px && px <= front.px && py >= top.py && py <= bottom.py) return "lift";
    return null;
  },

  onSideDown(e) {
    this.side.focus({ preventScroll: true });
    if (e.button !== 0) return;
    const r = this.side.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const kind = this.sideHit(px, py);
    if (!kind) return;
    e.preventDefault();
    this.side.setPointerCapture(e.pointerId);
    const frame = this.sideFrame();
    this.sideDrag = { kind, frame, box: { ...this.selected() }, start: this.sidePoint(frame, px, py) };
  },

  onSideMove(e) {
    const r = this.side.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const d = this.sideDrag;
    if (!d) {
      const kind = this.sideHit(px, py);
      if (kind !== this.sideHover) {
        this.sideHover = kind;
        this.requestRender(false);
      }
      const cursors = { top: "ns-resize", bottom: "ns-resize", lift: "ns-resize", front: "ew-resize", back: "ew-resize" };
      this.side.style.cursor = cursors[kind] || "default";
      return;
    }
    const p = this.sidePoint(d.frame, px, py), b = d.box;
    if (!d.moved) this.remember({ kind: "edit", row: b.row, before: this.values(b) });
    d.moved = true;
    const base = b.cz - b.h / 2, top = b.cz + b.h / 2;
    if (d.kind === "top") {
      const h = Math.max(MIN_SIZE, p.z - base);
      this.writeRow(b.row, { ...b, h, cz: base + h / 2 });
    } else if (d.kind === "bottom") {
      const h = Math.max(MIN_SIZE, top - p.z);
      this.writeRow(b.row, { ...b, h, cz: top - h / 2 });
    } else if (d.kind === "lift") {
      this.writeRow(b.row, { ...b, cz: b.cz + p.z - d.start.z });
    } else {
      const sx = d.kind === "front" ? 1 : -1;
      const fixed = (-sx * b.l) / 2;
      const l = Math.max(MIN_SIZE, sx * (p.u - fixed));
      const c = toWorld(b, fixed + (sx * l) / 2, 0);
      this.writeRow(b.row, { ...b, l, cx: c.x, cy: c.y });
    }
  },

  onSideUp(e) {
    if (this.side.hasPointerCapture(e.pointerId)) this.side.releasePointerCapture(e.pointerId);
    if (!this.sideDrag) return;
    this.sideDrag = null;
    this.requestRender();
  },
};
