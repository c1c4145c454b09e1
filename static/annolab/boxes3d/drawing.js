// The mouse in the bird's-eye view: draw a box on the ground, move it, resize it by a square
// handle, turn it by the round one, pan and zoom; and a click in the perspective selects.
import * as THREE from "../../vendor/three/three.module.js";
import { DEFAULT_HEIGHT, MIN_SIZE, MIN_DRAW, HANDLE_PX, STEP } from "./constants.js";
import { toWorld, toLocal } from "./geometry.js";

export const drawingMethods = {
  eventPixel(e) {
    const r = this.bev.getBoundingClientRect();
    return { px: e.clientX - r.left, py: e.clientY - r.top };
  },

  hitTest(px, py) {
    const b = this.selected();
    if (b) {
      const hs = this.handles(b);
      const near = (hd) => Math.hypot(hd.px - px, hd.py - py);
      const rotate = hs[hs.length - 1];
      if (near(rotate) <= HANDLE_PX) return { box: b, handle: rotate };
      // A box small on screen is crowded by its handles: well inside it is for moving it.
      const p = this.bevToWorld(px, py), q = toLocal(b, p.x, p.y), rim = 4 * this.mpp;
      if (this.small(b) && Math.abs(q.x) < b.l / 2 - rim && Math.abs(q.y) < b.w / 2 - rim) return { box: b };
      let best = null, bestDistance = HANDLE_PX;
      for (const hd of hs) {
        if (near(hd) <= bestDistance) [best, bestDistance] = [hd, near(hd)];
      }
      if (best) return { box: b, handle: best };
    }
    const p = this.bevToWorld(px, py);
    const slack = 3 * this.mpp;
    const inside = this.boxes.filter((x) => {
      if (!x.valid) return false;
      const q = toLocal(x, p.x, p.y);
      return Math.abs(q.x) <= x.l / 2 + slack && Math.abs(q.y) <= x.w / 2 + slack;
    });
    if (!inside.length) return null;
    if (b && inside.includes(b)) return { box: b };
    inside.sort((a, c) => a.l * a.w - c.l * c.w); // the smallest box under the pointer wins
    return { box: inside[0] };
  },

  cursorFor(hit) {
    if (!hit) return "crosshair";
    if (!hit.handle) return "move";
    if (hit.handle.kind === "rotate") return "grab";
    const b = hit.box;
    const dir = toWorld({ ...b, cx: 0, cy: 0 }, hit.handle.sx, hit.handle.sy);
    // screen direction of the handle from the centre: right = -y, up = +x
    const angle = ((Math.atan2(dir.x, -dir.y) * 180) / Math.PI + 360) % 180;
    if (angle < 22.5 || angle >= 157.5) return "ew-resize";
    if (angle < 67.5) return "nesw-resize";
    if (angle < 112.5) return "ns-resize";
    return "nwse-resize";
  },

  onPointerDown(e) {
    const { px, py } = this.eventPixel(e);
    this.bev.focus({ preventScroll: true });
    this.bev.setPointerCapture(e.pointerId);
    if (e.button === 1 || e.button === 2) {
      this.drag = { kind: "pan", px, py, centre: { ...this.centre } };
      e.preventDefault();
      return;
    }
    if (e.button !== 0) return;
    e.preventDefault();
    const p = this.bevToWorld(px, py);
    const hit = this.hitTest(px, py);
    // while a box is dragged here the side view keeps the frame it had: its slab of points
    // is drawn once, not at every step
    if (hit && hit.handle) {
      const sideFrame = this.sideFrame();
      this.drag = { kind: hit.handle.kind, handle: hit.handle, box: { ...hit.box }, start: p, px, py, sideFrame };
    } else if (hit) {
      if (hit.box.row !== this.selectedRow) this.select(hit.box.row);
      const sideFrame = this.sideFrame();
      this.drag = { kind: "move", box: { ...hit.box }, start: p, px, py, sideFrame };
    } else {
      this.drag = { kind: "draw", start: p, now: p, px, py };
    }
  },

  onPointerMove(e) {
    const { px, py } = this.eventPixel(e);
    const p = this.bevToWorld(px, py);
    this.pointer = p;
    const d = this.drag;
    if (!d) {
      const hit = this.hitTest(px, py);
      this.hover = hit;
      this.bev.style.cursor = this.cursorFor(hit);
      this.requestRender(false);
      return;
    }
    if (!d.moved && Math.hypot(px - d.px, py - d.py) < 3) return;
    if (!d.moved && d.box) this.remember({ kind: "edit", row: d.box.row, before: this.values(d.box) });
    d.moved = true;
    if (d.kind === "pan") {
      this.centre = { x: d.centre.x + (py - d.py) * this.mpp, y: d.centre.y + (px - d.px) * this.mpp };
      this.userView = true;
      this.updateBevCamera();
    } else if (d.kind === "draw") {
      d.now = p;
      this.requestRender(false);
    } else if (d.kind === "move") {
      this.writeRow(d.box.row, { ...d.box, cx: d.box.cx + p.x - d.start.x, cy: d.box.cy + p.y - d.start.y });
    } else if (d.kind === "rotate") {
      let yaw = Math.atan2(p.y - d.box.cy, p.x - d.box.cx);
      if (e.shiftKey) yaw = Math.round(yaw / STEP.turnBig) * STEP.turnBig;
      this.bev.style.cursor = "grabbing";
      this.writeRow(d.box.row, { ...d.box, yaw });
    } else {
      this.writeRow(d.box.row, this.resized(d.box, d.handle, p));
    }
  },

  resized(b, handle, p) {
    const q = toLocal(b, p.x, p.y);
    let { l, w } = b;
    let ox = 0, oy = 0;
    if (handle.sx) {
      const fixed = (-handle.sx * b.l) / 2;
      l = Math.max(MIN_SIZE, handle.sx * (q.x - fixed));
      ox = fixed + (handle.sx * l) / 2;
    }
    if (handle.sy) {
      const fixed = (-handle.sy * b.w) / 2;
      w = Math.max(MIN_SIZE, handle.sy * (q.y - fixed));
      oy = fixed + (handle.sy * w) / 2;
    }
    const c = toWorld(b, ox, oy);
    return { ...b, cx: c.x, cy: c.y, l, w };
  },

  onPointerUp(e) {
    const d = this.drag;
    this.drag = null;
    if (this.bev.hasPointerCapture(e.pointerId)) this.bev.releasePointerCapture(e.pointerId);
    if (!d) return;
    if (d.kind === "draw") {
      const l = Math.abs(d.now.x - d.start.x), w = Math.abs(d.now.y - d.start.y);
      if (d.moved && l >= MIN_DRAW && w >= MIN_DRAW) this.create(d.start, d.now);
      else if (!d.moved) this.select(null);
      else this.requestRender(false);
    } else if (d.box) {
      this.requestRender(); // the side view follows the box again
    }
  },

  create(a, c) {
    const x0 = Math.min(a.x, c.x), x1 = Math.max(a.x, c.x);
    const y0 = Math.min(a.y, c.y), y1 = Math.max(a.y, c.y);
    const h = DEFAULT_HEIGHT;
    const base = this.groundUnder(x0, x1, y0, y1);
    const label = this.labelSelect && this.labelSelect.value ? this.labelSelect.value : "";
    const tr = this.newRow();
    this.remember({ kind: "create", row: tr });
    this.selectedRow = tr;
    this.writeRow(tr, { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, cz: base + h / 2, l: x1 - x0, w: y1 - y0, h, yaw: 0, label });
    this.focusPerspective(this.selected());
    this.bev.focus({ preventScroll: true });
  },

  onWheel(e) {
    e.preventDefault();
    const { px, py } = this.eventPixel(e);
    const p = this.bevToWorld(px, py);
    const { w, h } = this.bevSize();
    this.mpp = Math.min(5, Math.max(0.004, this.mpp * Math.exp(e.deltaY * 0.0015)));
    this.centre = { x: p.x - (h / 2 - py) * this.mpp, y: p.y - (w / 2 - px) * this.mpp };
    this.userView = true;
    this.updateBevCamera();
  },

  onPerspClick(e) {
    if (Math.hypot(e.clientX - this.perspDown.x, e.clientY - this.perspDown.y) > 4) return;
    const r = this.perspGl.getBoundingClientRect();
    const mouse = new THREE.Vector2(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    this.perspCamera.updateMatrixWorld(); // moved since the last frame, maybe
    ray.layers.set(0);
    ray.setFromCamera(mouse, this.perspCamera);
    // every box's faces are hit, shown (the selected one) or not
    const hit = ray.intersectObjects(Array.from(this.objects.values(), (o) => o.fill), false)[0];
    const obj = hit && Array.from(this.objects.values()).find((o) => o.fill === hit.object);
    this.select(obj ? obj.box.row : null);
  },
};
