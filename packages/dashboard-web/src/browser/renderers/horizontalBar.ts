import { barGauge } from "./gauge.js"

/** horizontal-bar: the latest value as a horizontal bar gauge. */
export const renderer = barGauge("horizontal")
