// Where each view looks: the bird's-eye camera and its pixel <-> metre mapping, zoom to a
// box and back, the perspective's orbit, and the canvases' sizes.
import * as THREE from "../../vendor/three/three.module.js";
import { toWorld } from "./geometry.js";

export const viewMethods = {
  fitView() {
    const { x0, x1, y0, y1 } = this.bounds;
    const { w, h } = this.bevSize();
    if (!w || !h) return;
    this.centre = { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
    this.mpp = Math.max((x1 - x0) / h, (y1 - y0) / w);
    this.userView = false;
    this.zoomedRow = null;
    this.updateBevCamera();
  },

  resetPerspective() {
    const { x0, x1, y0, y1 } = this.bounds;
    const r = Math.max(x1 - x0, y1 - y0) / 2;
    const target = new THREE.Vector3((x0 + x1) / 2, (y0 + y1) / 2, this.ground);
    this.controls.target.copy(target);
    this.perspCamera.position.set(target.x - 1.1 * r, target.y + 0.55 * r, target.z + 0.75 * r);
    this.perspCamera.far = Math.max(2000, 8 * r);
    this.perspCamera.updateProjectionMatrix();
    this.controls.update();
  },

  focusPerspective(b) {
    if (!b) return this.resetPerspective();
    const d = 2.2 * Math.max(b.l, b.w, b.h) + 5;
    const back = toWorld(b, -0.8 * d, 0.55 * d);
    this.controls.target.set(b.cx, b.cy, b.cz);
    this.perspCamera.position.set(back.x, back.y, b.cz + 0.6 * d);
    this.controls.update();
    this.requestRender();
  },

  // Z and "Zoom to box": in to the box, and out to the whole cloud the second time.
  toggleZoom(b) {
    const near = b && this.zoomedRow !== b.row;
    if (near) this.zoomTo(b);
    else this.fitView();
    this.zoomedRow = near ? b.row : null;
  },

  // The bird's-eye view around one box (at least 12 m across), or the whole cloud again.
  zoomTo(b) {
    const { w, h } = this.bevSize();
    if (!b || !w || !h) return this.fitView();
    this.centre = { x: b.cx, y: b.cy };
    this.mpp = Math.max(12, 3 * Math.hypot(b.l, b.w)) / Math.min(w, h);
    this.userView = true;
    this.updateBevCamera();
  },

  bevSize() {
    return { w: this.bev.clientWidth, h: this.bev.clientHeight };
  },

  updateBevCamera() {
    const { w, h } = this.bevSize();
    const m = this.mpp, cam = this.bevCamera;
    cam.left = (-w / 2) * m;
    cam.right = (w / 2) * m;
    cam.top = (h / 2) * m;
    cam.bottom = (-h / 2) * m;
    cam.position.set(this.centre.x, this.centre.y, this.ground + 1000);
    cam.lookAt(this.centre.x, this.centre.y, this.ground);
    cam.updateProjectionMatrix();
    // The pixel <-> metre mapping, for anyone scripting the view (and the browser tests).
    this.bev.dataset.metresPerPixel = String(m);
    this.bev.dataset.centreX = String(this.centre.x);
    this.bev.dataset.centreY = String(this.centre.y);
    this.requestRender();
  },

  // CSS pixels of the bird's-eye view (from its top left corner) <-> metres.
  bevToWorld(px, py) {
    const { w, h } = this.bevSize();
    return { x: this.centre.x + (h / 2 - py) * this.mpp, y: this.centre.y + (w / 2 - px) * this.mpp };
  },

  worldToBev(x, y) {
    const { w, h } = this.bevSize();
    return { px: w / 2 - (y - this.centre.y) / this.mpp, py: h / 2 - (x - this.centre.x) / this.mpp };
  },

  resize() {
    for (const [renderer, canvas, overlay] of [
      [this.bevRenderer, this.bevGl, this.bev],
      [this.perspRenderer, this.perspGl, this.perspLabels],
      [this.sideRenderer, this.sideGl, this.side],
    ]) {
      const w = canvas.clientWidth, h = canvas.clientHeight;
      if (!w || !h) continue;
      renderer.setSize(w, h, false);
      const dpr = Math.min(window.devicePixelRatio || 1, 2);
      overlay.width = Math.round(w * dpr);
      overlay.height = Math.round(h * dpr);
    }
    const { w, h } = this.bevSize();
    if (w && h) {
      if (!this.userView) this.fitView();
      else this.updateBevCamera();
    }
    if (this.perspGl.clientHeight) {
      this.perspCamera.aspect = this.perspGl.clientWidth / this.perspGl.clientHeight;
      this.perspCamera.updateProjectionMatrix();
    }
    this.requestRender();
  },
};
