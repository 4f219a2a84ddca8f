import { barGauge } from "./gauge.js"

/** vertical-bar: the latest value as a vertical bar gauge. */
export const renderer = barGauge("vertical")
