// Fitting a board to the window: the height left for it between its top and the bottom of the
// window, less what must stay in view under it (the racer's controls), goes to the board as
// `--fit-h`; board.css turns that into card sizes and column overlaps. Measured from the page
// as it is at scroll 0, so that the board and its controls are all in view without scrolling.

/** The least height a board is given, px: a window lower than that scrolls instead. */
const MIN_FIT_PX = 260;
/** Room kept free under the last thing that must be in view, px. */
const MARGIN_PX = 8;

/**
 * Give `board` the height that keeps it, and `below` (an element under it, optional), inside
 * the window. `top`: where the board's top will be in the window, px (default: where it is at
 * scroll 0). Does nothing while the board is not displayed.
 */
export function fitBoard(board, { below = null, top = null } = {}) {
  const box = board.getBoundingClientRect();
  if (!box.width) return;
  const start = top ?? box.top + window.scrollY;
  const belowBox = below?.getBoundingClientRect();
  const under = belowBox?.height ? belowBox.bottom - box.bottom : 0;
  const px = `${Math.max(MIN_FIT_PX, Math.floor(window.innerHeight - start - under - MARGIN_PX))}px`;
  if (board.style.getPropertyValue("--fit-h") !== px) board.style.setProperty("--fit-h", px);
}
