// 3D boxes on a point cloud: a bird's-eye view to draw, move, resize and rotate boxes, a side
// view of the selected box for its base and height, and a perspective view to check them
// (three.js, vendored). The table of numbers under the views stays the form: every
// change made here is written into its inputs, and every typed number redraws the box.
//
// The modules under boxes3d/ hold the viewer, one concern each; this one starts a viewer for
// every box table on the page.
import { BoxViewer } from "./boxes3d/viewer.js";

const viewers = {};
document.querySelectorAll(".boxes3d[data-points-url]").forEach((root) => {
  const viewer = new BoxViewer(root);
  viewers[root.dataset.for] = viewer.api();
  viewer.start();
});
window.annolabBoxes = viewers;
