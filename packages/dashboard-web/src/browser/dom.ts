/**
 * The only way the page creates elements: text goes in through `textContent`, never `innerHTML`, so pushed strings
 * are always shown as text (contract section 11).
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

/** An `<img>` for a URL already checked by `safeImageUrl`: lazy, no referrer, hidden when it fails to load. */
export const image = (src: string, className: string, alt: string): HTMLImageElement => {
  const img = el("img", className)
  img.alt = alt
  img.referrerPolicy = "no-referrer"
  img.decoding = "async"
  img.addEventListener("error", () => img.classList.add("ds-broken"))
  img.src = src
  return img
}
