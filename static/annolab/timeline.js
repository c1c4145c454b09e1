// Segment schemes on a timeline: a waveform (audio) or a plain timeline (video) under the
// player, one lane per tier, where dragging marks a segment. The table of start/end/label
// rows stays the form's only fields (it works without this script); the timeline draws its
// rows as regions and writes every drag back into them.
//
// The modules under timeline/ hold the timeline, one concern each; this one starts a
// timeline for every segment scheme on the page.
import { Timeline } from "./timeline/timeline.js";

document.querySelectorAll(".segment-timeline[data-for]").forEach((root) => {
  new Timeline(root).start();
});
