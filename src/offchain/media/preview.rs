//! What a media file is ([`sniff`]), and its three PNG previews ([`render`]).
//!
//! The type comes from the file's first bytes when they are recognized (a server's
//! `Content-Type` is often wrong: `application/octet-stream`, `text/plain` for IPFS, …), and
//! from the `Content-Type` otherwise. PNG, JPEG and GIF (its first frame) are decoded with the
//! `image` crate under [`image::Limits`] (no side over [`MAX_SIDE`] px, at most
//! [`MAX_ALLOC`] bytes allocated), so a small file claiming a huge canvas cannot exhaust
//! memory; SVG is parsed by usvg and rasterized by resvg straight at each preview size. Each
//! preview's long side is exactly 100, 250 or 500 px (see
//! [`super::PreviewSize::dimensions`]), resized with a Lanczos-3 filter.
//!
//! Rendering is CPU work: callers run it on the blocking pool.

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat};
use resvg::{tiny_skia, usvg};

use super::{Dimensions, PreviewSize};

/// The largest width or height of an original image that is decoded.
pub const MAX_SIDE: u32 = 16_384;
/// The most memory the decoder may allocate for one image.
pub const MAX_ALLOC: u64 = 256 * 1024 * 1024;

/// How a file can be turned into previews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoder {
    /// PNG, JPEG or GIF: decoded by `image`.
    Raster(ImageFormat),
    /// SVG: rasterized by resvg.
    Svg,
    /// Not decoded (audio, video, other image formats, anything else).
    None,
}

/// What a file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sniffed {
    /// Its media type, when known.
    pub mimetype: Option<String>,
    /// `image`, `audio` or `video`, when it is one.
    pub category: Option<&'static str>,
    pub decoder: Decoder,
}

/// Signatures at the start of a file: (offset, bytes, media type, decoder).
const MAGIC: &[(usize, &[u8], &str, Decoder)] = &[
    (
        0,
        b"\x89PNG\r\n\x1a\n",
        "image/png",
        Decoder::Raster(ImageFormat::Png),
    ),
    (
        0,
        b"\xff\xd8\xff",
        "image/jpeg",
        Decoder::Raster(ImageFormat::Jpeg),
    ),
    (0, b"GIF87a", "image/gif", Decoder::Raster(ImageFormat::Gif)),
    (0, b"GIF89a", "image/gif", Decoder::Raster(ImageFormat::Gif)),
    (8, b"WEBP", "image/webp", Decoder::None),
    (8, b"WAVE", "audio/wav", Decoder::None),
    (4, b"ftypavif", "image/avif", Decoder::None),
    (4, b"ftypheic", "image/heic", Decoder::None),
    (4, b"ftypqt  ", "video/quicktime", Decoder::None),
    (4, b"ftyp", "video/mp4", Decoder::None),
    (0, b"\x1a\x45\xdf\xa3", "video/webm", Decoder::None),
    (0, b"OggS", "audio/ogg", Decoder::None),
    (0, b"fLaC", "audio/flac", Decoder::None),
    (0, b"ID3", "audio/mpeg", Decoder::None),
    (0, b"%PDF-", "application/pdf", Decoder::None),
];

fn category_of(mimetype: &str) -> Option<&'static str> {
    match mimetype.split('/').next() {
        Some("image") => Some("image"),
        Some("audio") => Some("audio"),
        Some("video") => Some("video"),
        _ => None,
    }
}

/// Whether the file is SVG text: after an optional BOM and whitespace it starts with `<`, and
/// an `<svg` element opens in its first 4 KiB.
fn is_svg(bytes: &[u8]) -> bool {
    let b = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let head = &b[start..b.len().min(start + 4096)];
    head.first() == Some(&b'<') && head.windows(4).any(|w| w == b"<svg")
}

/// What `bytes` are, from their signature, else from `content_type` (lowercase, without
/// parameters, as the fetcher gives it).
pub fn sniff(bytes: &[u8], content_type: Option<&str>) -> Sniffed {
    let found = |mimetype: &str, decoder| Sniffed {
        mimetype: Some(mimetype.to_string()),
        category: category_of(mimetype),
        decoder,
    };
    for (offset, magic, mimetype, decoder) in MAGIC {
        if bytes.get(*offset..offset + magic.len()) == Some(*magic) {
            return found(mimetype, *decoder);
        }
    }
    // MPEG audio frame sync (11 bits set); JPEG's `ff d8` was matched above.
    if bytes.len() > 2 && bytes[0] == 0xff && bytes[1] & 0xe0 == 0xe0 {
        return found("audio/mpeg", Decoder::None);
    }
    if is_svg(bytes) {
        return found("image/svg+xml", Decoder::Svg);
    }
    let mimetype = content_type
        .map(str::trim)
        .filter(|c| !c.is_empty() && *c != "application/octet-stream");
    Sniffed {
        mimetype: mimetype.map(str::to_string),
        category: mimetype.and_then(category_of),
        decoder: Decoder::None,
    }
}

/// One rendered preview.
#[derive(Debug, Clone)]
pub struct Preview {
    pub size: PreviewSize,
    pub dimensions: Dimensions,
    /// The PNG file.
    pub png: Vec<u8>,
}

/// Why a file gave no previews.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);

/// The three previews of `bytes` (low, medium, high).
pub fn render(bytes: &[u8], decoder: Decoder) -> Result<Vec<Preview>, RenderError> {
    match decoder {
        Decoder::Raster(format) => render_raster(bytes, format),
        Decoder::Svg => render_svg(bytes),
        Decoder::None => Err(RenderError("not a decodable image".into())),
    }
}

fn render_raster(bytes: &[u8], format: ImageFormat) -> Result<Vec<Preview>, RenderError> {
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let original = reader
        .decode()
        .map_err(|e| RenderError(format!("cannot decode: {e}")))?;
    // 8-bit RGB(A): what every PNG viewer shows, and what the resize works on fastest.
    let original = if original.color().has_alpha() {
        DynamicImage::ImageRgba8(original.to_rgba8())
    } else {
        DynamicImage::ImageRgb8(original.to_rgb8())
    };
    let (w, h) = (f64::from(original.width()), f64::from(original.height()));

    let mut previews = Vec::with_capacity(3);
    // Largest first: when the original is larger, the smaller previews are resized from the
    // high one (already filtered, and far fewer pixels to read).
    let mut high: Option<DynamicImage> = None;
    for size in PreviewSize::ALL.into_iter().rev() {
        let (pw, ph) = size.dimensions(w, h);
        let source = match &high {
            Some(img)
                if img.width().max(img.height()) < original.width().max(original.height()) =>
            {
                img
            }
            _ => &original,
        };
        let img = source.resize_exact(pw, ph, FilterType::Lanczos3);
        let mut png = Vec::new();
        img.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .map_err(|e| RenderError(format!("cannot encode PNG: {e}")))?;
        previews.push(Preview {
            size,
            dimensions: Dimensions {
                width: pw,
                height: ph,
            },
            png,
        });
        if size == PreviewSize::High {
            high = Some(img);
        }
    }
    previews.reverse();
    Ok(previews)
}

fn render_svg(bytes: &[u8]) -> Result<Vec<Preview>, RenderError> {
    let options = usvg::Options {
        // Never read files named by the SVG: only images embedded as `data:` URIs are resolved.
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: usvg::ImageHrefResolver::default_data_resolver(),
            resolve_string: Box::new(|_, _| None),
        },
        ..Default::default()
    };
    let tree = usvg::Tree::from_data(bytes, &options)
        .map_err(|e| RenderError(format!("cannot parse SVG: {e}")))?;
    let (w, h) = (tree.size().width(), tree.size().height());
    PreviewSize::ALL
        .into_iter()
        .map(|size| {
            let (pw, ph) = size.dimensions(f64::from(w), f64::from(h));
            let mut pixmap = tiny_skia::Pixmap::new(pw, ph)
                .ok_or_else(|| RenderError(format!("cannot allocate {pw}x{ph} pixels")))?;
            let scale = tiny_skia::Transform::from_scale(pw as f32 / w, ph as f32 / h);
            resvg::render(&tree, scale, &mut pixmap.as_mut());
            let png = pixmap
                .encode_png()
                .map_err(|e| RenderError(format!("cannot encode PNG: {e}")))?;
            Ok(Preview {
                size,
                dimensions: Dimensions {
                    width: pw,
                    height: ph,
                },
                png,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
        }));
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    fn decoded(p: &Preview) -> (u32, u32) {
        let img = image::load_from_memory_with_format(&p.png, ImageFormat::Png).unwrap();
        (img.width(), img.height())
    }

    #[test]
    fn sniffs_by_signature_then_header() {
        let s = sniff(&png(2, 2), Some("text/plain"));
        assert_eq!(s.mimetype.as_deref(), Some("image/png"));
        assert_eq!(s.category, Some("image"));
        assert_eq!(s.decoder, Decoder::Raster(ImageFormat::Png));
        let s = sniff(b"\xef\xbb\xbf \n<?xml version=\"1.0\"?><svg/>", None);
        assert_eq!(s.decoder, Decoder::Svg);
        let s = sniff(b"RIFF\0\0\0\0WEBPVP8 ", None);
        assert_eq!(
            (s.mimetype.as_deref(), s.category, s.decoder),
            (Some("image/webp"), Some("image"), Decoder::None)
        );
        let s = sniff(b"\0\0\0\x18ftypmp42", Some("application/octet-stream"));
        assert_eq!(s.category, Some("video"));
        let s = sniff(b"ID3\x04", None);
        assert_eq!(s.category, Some("audio"));
        let s = sniff(b"hello", Some("text/plain"));
        assert_eq!(
            (s.mimetype.as_deref(), s.category, s.decoder),
            (Some("text/plain"), None, Decoder::None)
        );
        let s = sniff(b"junk", Some("image/png"));
        assert_eq!((s.category, s.decoder), (Some("image"), Decoder::None));
        assert_eq!(sniff(b"", Some("application/octet-stream")).mimetype, None);
    }

    #[test]
    fn raster_previews_have_the_long_side_and_aspect() {
        let previews = render(&png(640, 480), Decoder::Raster(ImageFormat::Png)).unwrap();
        let dims: Vec<_> = previews.iter().map(decoded).collect();
        assert_eq!(dims, vec![(100, 75), (250, 188), (500, 375)]);
        let sizes: Vec<_> = previews.iter().map(|p| p.size).collect();
        assert_eq!(sizes, PreviewSize::ALL.to_vec());
        // Small originals are scaled up.
        let previews = render(&png(20, 40), Decoder::Raster(ImageFormat::Png)).unwrap();
        assert_eq!(decoded(&previews[2]), (250, 500));
    }

    #[test]
    fn svg_is_rasterized_at_each_size() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 60">
            <rect width="120" height="60" fill="#f00"/></svg>"##;
        let previews = render(svg, Decoder::Svg).unwrap();
        let dims: Vec<_> = previews.iter().map(decoded).collect();
        assert_eq!(dims, vec![(100, 50), (250, 125), (500, 250)]);
        let img = image::load_from_memory(&previews[0].png)
            .unwrap()
            .to_rgba8();
        assert_eq!(img.get_pixel(50, 25).0, [255, 0, 0, 255]);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(render(b"\x89PNG\r\n\x1a\nnope", Decoder::Raster(ImageFormat::Png)).is_err());
        assert!(render(b"<svg", Decoder::Svg).is_err());
        assert!(render(b"x", Decoder::None).is_err());
        // A PNG header claiming a canvas larger than the limits.
        let mut huge = png(1, 1);
        huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        assert!(render(&huge, Decoder::Raster(ImageFormat::Png)).is_err());
    }
}
