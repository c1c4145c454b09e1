// The three.js side: three renderers, the cloud and box scenes, each box as a group of
// lines and faces, and the frame loop that draws every view and overlay.
import * as THREE from "../../vendor/three/three.module.js";
import { OrbitControls } from "../../vendor/three/addons/OrbitControls.js";
import { PALETTE, UNLABELLED, SELECTED } from "./constants.js";

const BACKGROUND = 0x0f131a;

const UNIT_BOX = new THREE.BoxGeometry(1, 1, 1);
const UNIT_EDGES = new THREE.EdgesGeometry(UNIT_BOX);
// Heading marker in box units: a line from the top centre to the front, an arrow head and a
// cross on the front face (+x is the box's front).
const HEADING = new THREE.BufferGeometry().setAttribute(
  "position",
  new THREE.Float32BufferAttribute(
    [
      0, 0, 0.5, 0.5, 0, 0.5,
      0.5, 0, 0.5, 0.32, 0.22, 0.5,
      0.5, 0, 0.5, 0.32, -0.22, 0.5,
      0.5, -0.5, -0.5, 0.5, 0.5, 0.5,
      0.5, 0.5, -0.5, 0.5, -0.5, 0.5,
    ],
    3
  )
);

// Layers: 0 every view (boxes), 1 the bird's-eye and side views' points, 2 the perspective's.
const BEV_LAYER = 1;
const PERSP_LAYER = 2;

// One view's picture of the cloud (points and grid) is kept in a texture and drawn again only
// when its camera or the cloud's colours change; boxes are drawn over it every frame. So a box
// dragged over a large cloud costs a few lines, not the whole cloud, even without a GPU.
class CloudLayer {
  constructor(renderer) {
    this.renderer = renderer;
    this.target = null;
    this.key = "";
    this.scene = new THREE.Scene();
    this.camera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1);
    this.quad = new THREE.Mesh(
      new THREE.PlaneGeometry(2, 2),
      new THREE.MeshBasicMaterial({ depthTest: false, depthWrite: false })
    );
    this.scene.add(this.quad);
  }

  render(cloud, boxes, camera, version) {
    const r = this.renderer;
    const size = r.getDrawingBufferSize(new THREE.Vector2());
    if (!this.target || this.target.width !== size.x || this.target.height !== size.y) {
      if (this.target) this.target.dispose();
      this.target = new THREE.WebGLRenderTarget(size.x, size.y, { samples: 4 });
      this.quad.material.map = this.target.texture;
      this.quad.material.needsUpdate = true;
      this.key = "";
    }
    camera.updateMatrixWorld();
    const key = [version, ...camera.matrixWorld.elements, ...camera.projectionMatrix.elements].join(",");
    if (key !== this.key) {
      r.setRenderTarget(this.target);
      r.render(cloud, camera);
      r.setRenderTarget(null);
      this.key = key;
    }
    r.render(this.scene, this.camera);
    r.autoClear = false;
    r.clearDepth();
    r.render(boxes, camera);
    r.autoClear = true;
  }
}

export const sceneMethods = {
  setUpScene() {
    const options = { antialias: true, powerPreference: "low-power" };
    this.bevRenderer = new THREE.WebGLRenderer({ canvas: this.bevGl, ...options });
    this.perspRenderer = new THREE.WebGLRenderer({ canvas: this.perspGl, ...options });
    this.sideRenderer = new THREE.WebGLRenderer({ canvas: this.sideGl, ...options });
    for (const r of [this.bevRenderer, this.perspRenderer, this.sideRenderer]) {
      r.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
      r.setClearColor(BACKGROUND, 1);
    }
    this.scene = new THREE.Scene(); // the cloud: points and grid
    this.boxScene = new THREE.Scene();
    this.cloudVersion = 0; // bumped when the cloud's look changes (colours, grid)
    this.layers = {
      bev: new CloudLayer(this.bevRenderer),
      persp: new CloudLayer(this.perspRenderer),
      side: new CloudLayer(this.sideRenderer),
    };
    this.bevCamera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 5000);
    this.bevCamera.up.set(1, 0, 0); // x (forward) points up the screen, y (left) to the left
    this.bevCamera.layers.enable(BEV_LAYER);
    this.perspCamera = new THREE.PerspectiveCamera(50, 1, 0.1, 2000);
    this.perspCamera.up.set(0, 0, 1);
    this.perspCamera.layers.enable(PERSP_LAYER);
    this.sideCamera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 1000);
    this.sideCamera.up.set(0, 0, 1);
    this.sideCamera.layers.enable(BEV_LAYER);
    this.controls = new OrbitControls(this.perspCamera, this.perspGl);
    this.controls.screenSpacePanning = false; // pan along the ground
    this.controls.maxPolarAngle = Math.PI * 0.495;
    this.controls.addEventListener("change", () => this.requestRender());

    this.pointsGeometry = new THREE.BufferGeometry();
    this.bevPoints = new THREE.Points(
      this.pointsGeometry,
      new THREE.PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: true })
    );
    this.perspPoints = new THREE.Points(
      this.pointsGeometry,
      new THREE.PointsMaterial({ size: 1.6, sizeAttenuation: false, vertexColors: true })
    );
    this.bevPoints.layers.set(BEV_LAYER);
    this.perspPoints.layers.set(PERSP_LAYER);
    this.bevPoints.frustumCulled = this.perspPoints.frustumCulled = false;
    this.scene.add(this.bevPoints, this.perspPoints);
    this.boxGroup = new THREE.Group();
    this.boxScene.add(this.boxGroup);
  },

  colourOf(label) {
    const i = this.labels.indexOf(label);
    return i < 0 ? UNLABELLED : PALETTE[i % PALETTE.length];
  },

  updateObjects() {
    const live = new Set();
    for (const b of this.boxes) {
      if (!b.valid) continue;
      live.add(b.row);
      let obj = this.objects.get(b.row);
      if (!obj) {
        obj = this.makeBoxObject();
        this.objects.set(b.row, obj);
        this.boxGroup.add(obj.group);
      }
      const selected = b.row === this.selectedRow;
      const colour = selected ? SELECTED : this.colourOf(b.label);
      obj.group.position.set(b.cx, b.cy, b.cz);
      obj.group.rotation.set(0, 0, b.yaw);
      obj.inner.scale.set(b.l, b.w, Math.max(b.h, 0.01));
      obj.edges.material.color.set(colour);
      obj.heading.material.color.set(colour);
      obj.fill.material.color.set(colour);
      obj.fill.visible = selected;
      obj.box = b;
    }
    for (const [row, obj] of this.objects) {
      if (live.has(row)) continue;
      this.boxGroup.remove(obj.group);
      for (const part of [obj.edges, obj.heading, obj.fill]) part.material.dispose();
      this.objects.delete(row);
    }
    for (const tr of this.rows()) tr.classList.toggle("boxes3d-selected-row", tr === this.selectedRow);
    if (this.deleteButton) this.deleteButton.disabled = !this.selected();
    if (this.zoomButton) this.zoomButton.disabled = !this.selected();
  },

  makeBoxObject() {
    const group = new THREE.Group();
    const inner = new THREE.Group();
    const edges = new THREE.LineSegments(UNIT_EDGES, new THREE.LineBasicMaterial());
    const heading = new THREE.LineSegments(HEADING, new THREE.LineBasicMaterial());
    const fill = new THREE.Mesh(
      UNIT_BOX,
      new THREE.MeshBasicMaterial({ transparent: true, opacity: 0.14, depthWrite: false })
    );
    inner.add(fill, edges, heading);
    group.add(inner);
    return { group, inner, edges, heading, fill, box: null };
  },

  // gl false: only the 2D overlays changed (hover, a footprint being drawn), not the scene.
  requestRender(gl = true) {
    if (gl) this.glDirty = true;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  },

  render() {
    if (this.glDirty) {
      this.glDirty = false;
      const v = this.cloudVersion;
      if (this.bevGl.clientWidth) this.layers.bev.render(this.scene, this.boxScene, this.bevCamera, v);
      if (this.perspGl.clientWidth) this.layers.persp.render(this.scene, this.boxScene, this.perspCamera, v);
      this.renderSide();
    }
    this.drawBevOverlay();
    this.drawPerspLabels();
    this.drawSideOverlay();
    this.root.dataset.frames = String(Number(this.root.dataset.frames || 0) + 1);
  },
};
