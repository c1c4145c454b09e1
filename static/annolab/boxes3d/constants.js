// The numbers the box tool is tuned by: sizes, steps, handle reach and colours.
export const FIELDS = ["cx", "cy", "cz", "l", "w", "h", "yaw"];
export const DEFAULT_HEIGHT = 1.5; // metres, for a newly drawn box
export const MIN_SIZE = 0.1; // metres, the smallest length, width or height a drag or key makes
export const MIN_DRAW = 0.2; // metres: a smaller drag on the ground is a click, not a box
export const HANDLE_PX = 9; // pick radius of a handle, CSS pixels
export const ROTATE_PX = 30; // how far the rotation handle sits in front of the box, CSS pixels
export const STEP = { move: 0.1, moveBig: 1, turn: Math.PI / 180, turnBig: Math.PI / 18, height: 0.1, heightBig: 0.5 };
export const PALETTE = ["#4fa3ff", "#ff9f43", "#2ed47a", "#ff5c8a", "#b388ff", "#00d1c1", "#a3e635", "#f78fb3"];
export const UNLABELLED = "#c7ced9";
export const SELECTED = "#ffd400";
