/** Pure pieces of ECharts options shared by the chart renderers (no DOM, no ECharts import). */

/** Series colours, in order (the contract's five named colours first). */
export const palette = ["#3d8bfd", "#2fbf71", "#f5c518", "#f2555a", "#a66cff", "#22c3c3", "#ff8a3d", "#e66bb8"]

/** Options every chart shares: no animation (a wall display updating many times a second), no tooltip. */
export const base = { animation: false, tooltip: { show: false } } as const

/** A chart grid whose axis labels stay inside the chart (what `containLabel` did before ECharts 6). */
export const grid = {
  left: 4,
  right: 14,
  top: 12,
  bottom: 4,
  outerBoundsMode: "same",
  outerBoundsContain: "axisLabel"
} as const
