// Segment colours: one per label, in the label list's order, and the unlabelled grey.

export const PALETTE = [
  [36, 87, 197], [31, 122, 77], [179, 38, 30], [138, 90, 0],
  [110, 60, 170], [0, 120, 140], [190, 80, 140], [90, 96, 110],
];
export const UNLABELLED = [90, 96, 110];

export function rgba(rgb, alpha) { return "rgba(" + rgb.join(", ") + ", " + alpha + ")"; }
