import { formatDate, record, safeImageUrl, toText } from "../format.js"

/** One text-feed item (docs/api.md section 3: `{title, msg, imgUrl?, date?}`), all text. */
export interface FeedItem {
  readonly title: string
  readonly msg: string
  readonly imgUrl?: string
  readonly date?: string
}

/** The most items a feed shows. */
export const maxFeedItems = 30

/** Pure: the feed's items, newest first; image URLs only when http(s). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): ReadonlyArray<FeedItem> | undefined => {
  const items: Array<FeedItem> = []
  for (let i = entries.length - 1; i >= 0 && items.length < maxFeedItems; i--) {
    const r = record(entries[i]!.point)
    if (r === undefined) continue
    const title = toText(r["title"]) ?? ""
    const msg = toText(r["msg"]) ?? ""
    if (title === "" && msg === "") continue
    const imgUrl = safeImageUrl(r["imgUrl"])
    const date = formatDate(r["date"])
    items.push({
      title,
      msg,
      ...(imgUrl === undefined ? {} : { imgUrl }),
      ...(date === undefined ? {} : { date })
    })
  }
  return items.length === 0 ? undefined : items
}
