import { ensureChromium } from "@dashstream/dashboard-web/testing/setup"

/**
 * Vitest global setup of the server's tests: the dashboard end-to-end test drives Debian's Chromium, installed here
 * when missing (as the dashboard-web package's own setup does), so that it fails rather than skips without it.
 */
export default function setup(): void {
  ensureChromium()
}
