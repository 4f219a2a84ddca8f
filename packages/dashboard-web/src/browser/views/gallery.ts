import { record, safeImageUrl, toText } from "../format.js"

/** The gallery tile: the latest picture (`{title, msg?, imgUrl}`) with its caption, and how many it holds. */
export interface GalleryView {
  readonly title: string
  readonly msg: string
  readonly imgUrl?: string
  readonly count: number
}

/** Pure: the latest gallery item; its image only when the URL is http(s). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): GalleryView | undefined => {
  const r = entries.length === 0 ? undefined : record(entries[entries.length - 1]!.point)
  if (r === undefined) return undefined
  const imgUrl = safeImageUrl(r["imgUrl"])
  const title = toText(r["title"]) ?? ""
  if (imgUrl === undefined && title === "") return undefined
  return {
    title,
    msg: toText(r["msg"]) ?? "",
    ...(imgUrl === undefined ? {} : { imgUrl }),
    count: entries.length
  }
}
