// The page's icon (without one, every page load logged a 404 for /favicon.ico): three rising bars on a
// dark rounded square, as SVG (linked from the page head) and as a 32x32 ICO (answered at /favicon.ico for clients
// that ask for it without reading the page), both drawn from the one list of shapes below.

const SIZE = 32
const background = { x: 0, y: 0, w: 32, h: 32, r: 6, color: "#172033" }
const bars = [
  { x: 6, y: 17, w: 5, h: 9, r: 1, color: "#3d8bfd" },
  { x: 13.5, y: 11, w: 5, h: 15, r: 1, color: "#2fbf71" },
  { x: 21, y: 6, w: 5, h: 20, r: 1, color: "#f5c518" }
]
const shapes = [background, ...bars]

/** The icon as SVG text. */
export const faviconSvg = () =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}">` +
  shapes
    .map((s) => `<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" rx="${s.r}" fill="${s.color}"/>`)
    .join("") +
  `</svg>\n`

// True when the pixel centre (px, py) lies inside the rounded rectangle s.
const inside = (s, px, py) => {
  if (px < s.x || px > s.x + s.w || py < s.y || py > s.y + s.h) return false
  const cx = Math.min(Math.max(px, s.x + s.r), s.x + s.w - s.r)
  const cy = Math.min(Math.max(py, s.y + s.r), s.y + s.h - s.r)
  return (px - cx) ** 2 + (py - cy) ** 2 <= s.r ** 2
}

/** The icon as a 32x32, 32-bit ICO (one uncompressed BMP image with alpha), 4-times supersampled. */
export const faviconIco = () => {
  const pixels = Buffer.alloc(SIZE * SIZE * 4)
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      let [r, g, b, a] = [0, 0, 0, 0]
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const px = x + (sx + 0.5) / 4
          const py = y + (sy + 0.5) / 4
          let color
          for (const s of shapes) if (inside(s, px, py)) color = s.color
          if (color === undefined) continue
          r += parseInt(color.slice(1, 3), 16)
          g += parseInt(color.slice(3, 5), 16)
          b += parseInt(color.slice(5, 7), 16)
          a += 255
        }
      }
      const n = a / 255
      // BMP rows run bottom-up, pixels as BGRA (colour not premultiplied).
      const at = ((SIZE - 1 - y) * SIZE + x) * 4
      pixels[at] = n === 0 ? 0 : Math.round(b / n)
      pixels[at + 1] = n === 0 ? 0 : Math.round(g / n)
      pixels[at + 2] = n === 0 ? 0 : Math.round(r / n)
      pixels[at + 3] = Math.round(a / 16)
    }
  }
  const mask = Buffer.alloc((SIZE / 8) * SIZE) // the AND mask, unused with 32-bit alpha: all zero
  const info = Buffer.alloc(40)
  info.writeUInt32LE(40, 0)
  info.writeInt32LE(SIZE, 4)
  info.writeInt32LE(SIZE * 2, 8) // height counts the image and its mask
  info.writeUInt16LE(1, 12)
  info.writeUInt16LE(32, 14)
  info.writeUInt32LE(pixels.length + mask.length, 20)
  const image = Buffer.concat([info, pixels, mask])
  const header = Buffer.alloc(6 + 16)
  header.writeUInt16LE(0, 0)
  header.writeUInt16LE(1, 2) // an icon
  header.writeUInt16LE(1, 4) // one image
  header.writeUInt8(SIZE, 6)
  header.writeUInt8(SIZE, 7)
  header.writeUInt16LE(1, 10)
  header.writeUInt16LE(32, 12)
  header.writeUInt32LE(image.length, 14)
  header.writeUInt32LE(header.length, 18)
  return Buffer.concat([header, image])
}
