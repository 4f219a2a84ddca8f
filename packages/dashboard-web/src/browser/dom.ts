/**
 * The only way the page creates elements: text goes in through `textContent`, never `innerHTML`, so pushed strings
 * are always shown as text (docs/api.md section 11).
 */
export const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  if (className !== undefined) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

/** Replaces the children of `parent` with `children`. */
export const setChildren = (parent: Element, children: ReadonlyArray<Node>): void => {
  parent.replaceChildren(...children)
}

/**
 * An `<img>` for a URL already checked by `safeImageUrl`: lazy, no referrer. When it fails to load it is replaced by
 * a placeholder (`<div class="<className> ds-broken-image" role="img">`, a framed picture sign drawn by the
 * stylesheet) rather than the browser's broken-image icon and alt text.
 */
export const image = (src: string, className: string, alt: string): HTMLImageElement => {
  const img = el("img", className)
  img.alt = alt
  img.referrerPolicy = "no-referrer"
  img.decoding = "async"
  img.addEventListener("error", () => {
    const placeholder = el("div", `${className} ds-broken-image`)
    placeholder.setAttribute("role", "img")
    placeholder.setAttribute("aria-label", alt === "" ? "image not available" : `${alt} (image not available)`)
    img.replaceWith(placeholder)
  })
  img.src = src
  return img
}

/**
 * Marks `element` with a value's status colour (docs/api.md section 15: `data-status="red"`, which the stylesheet
 * colours), or clears it when the value meets no threshold.
 */
export const setStatus = (element: HTMLElement, status: string | undefined): void => {
  if (status === undefined) delete element.dataset["status"]
  else element.dataset["status"] = status
}

/**
 * Keeps the rows of a clipped list whole (no text cut): every child of `container` matching `rows` that
 * does not fit entirely inside the container's box is hidden (`visibility: hidden`, so the layout does not move),
 * rechecked whenever the container's size changes and whenever `recheck` is called (after new rows). Answers the
 * `recheck` and a `dispose` that stops watching.
 */
export const wholeRows = (
  container: HTMLElement,
  rows: string
): { readonly recheck: () => void; readonly dispose: () => void } => {
  const recheck = () => {
    const box = container.getBoundingClientRect()
    for (const row of Array.from(container.querySelectorAll<HTMLElement>(rows))) {
      row.style.visibility = ""
      const r = row.getBoundingClientRect()
      if (r.bottom > box.bottom + 0.5 || r.right > box.right + 0.5) row.style.visibility = "hidden"
    }
  }
  const observer = new ResizeObserver(recheck)
  observer.observe(container)
  return { recheck, dispose: () => observer.disconnect() }
}

/**
 * Sets the font size of `element` (whose text may wrap) to the largest whole pixel size from `min` to `max` at which
 * its text fits its box without overflowing, by bisection (about 6 layouts); call it after the text or the box
 * changes. Used for text that is not one short line (the label tile).
 */
export const fitFontSize = (element: HTMLElement, min: number, max: number): void => {
  let lo = min
  let hi = max
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    element.style.fontSize = `${mid}px`
    if (element.scrollHeight <= element.clientHeight + 1 && element.scrollWidth <= element.clientWidth + 1) lo = mid
    else hi = mid - 1
  }
  element.style.fontSize = `${lo}px`
}

/**
 * Tells the stylesheet how many characters a one-line value has (`--chars`), so that its font size can follow the
 * tile's width (`calc(170cqw / var(--chars))`) and a long value still fits on its line.
 */
export const setChars = (element: HTMLElement, text: string): void => {
  element.style.setProperty("--chars", String(Math.max(3, [...text].length)))
}
