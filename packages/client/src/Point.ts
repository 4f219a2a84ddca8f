/**
 * Point shapes per widget type (docs/api.md section 3): what a push may send (`PushPoints`) and what a read or a live
 * event returns (`StoredPoints`), from `@dashstream/contract`, where they are written once for the server, this
 * client and the dashboard page.
 */
export type {
  ChartItem,
  ChartPoint,
  DeltaPoint,
  Entry,
  GalleryPoint,
  HtmlPoint,
  ImagePoint,
  LabelPoint,
  LeaderboardItem,
  LeaderboardItemPush,
  LeaderboardPoint,
  ListItemPush,
  ListPoint,
  MapColor,
  MapPoint,
  MatrixPoint,
  NumberPoint,
  Numeric,
  NumericPush,
  PushPointOf,
  PushPoints,
  StoredMapPoint,
  StoredNumber,
  StoredPointOf,
  StoredPoints,
  StoredXyPoint,
  TablePoint,
  TableRowPush,
  TextFeedPoint,
  TimedNumber,
  XyPoint
} from "@dashstream/contract"
