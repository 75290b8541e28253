//! Where previews live: a local directory (`--media-dir`), one folder per original URL:
//! `{media_dir}/{url_hash}/{low|medium|high}.png`.
//!
//! Writes are atomic (a temporary file in the same folder, then a rename), so a reader never
//! sees half a file and a crash leaves at most a stray `.tmp-*` file. Paths are only ever built
//! from a checked URL hash ([`super::is_url_hash`]) and a [`PreviewSize`], never from request
//! text, so nothing outside the directory can be named.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::{is_url_hash, PreviewSize};

/// The preview store: a local directory. Cheap to clone.
#[derive(Debug, Clone)]
pub struct MediaStore {
    dir: PathBuf,
}

impl MediaStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, url_hash: &str, size: PreviewSize) -> std::io::Result<PathBuf> {
        if !is_url_hash(url_hash) {
            return Err(std::io::Error::new(
                ErrorKind::InvalidInput,
                "not a URL hash",
            ));
        }
        Ok(self.dir.join(url_hash).join(format!("{}.png", size.name())))
    }

    /// Stores one preview, replacing any previous file atomically.
    pub async fn put(&self, url_hash: &str, size: PreviewSize, png: &[u8]) -> std::io::Result<()> {
        let path = self.path(url_hash, size)?;
        let folder = path
            .parent()
            .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidInput, "no parent folder"))?;
        tokio::fs::create_dir_all(folder).await?;
        let mut suffix = [0u8; 8];
        getrandom::fill(&mut suffix).map_err(|e| std::io::Error::other(e.to_string()))?;
        let suffix = crate::types::hex::lower(&suffix);
        let tmp = folder.join(format!(".{}.png.tmp-{suffix}", size.name()));
        if let Err(e) = tokio::fs::write(&tmp, png).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        if let Err(e) = tokio::fs::rename(&tmp, &path).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        Ok(())
    }

    /// One preview's bytes; `None` when it is not stored (or `url_hash` is not a hash).
    pub async fn get(&self, url_hash: &str, size: PreviewSize) -> std::io::Result<Option<Vec<u8>>> {
        let Ok(path) = self.path(url_hash, size) else {
            return Ok(None);
        };
        match tokio::fs::read(&path).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn puts_and_gets_atomically() {
        let dir = std::env::temp_dir().join(format!("tq-media-store-{}", std::process::id()));
        let store = MediaStore::new(&dir);
        let hash = super::super::url_hash("https://example.com/a.png");
        assert_eq!(store.get(&hash, PreviewSize::Low).await.unwrap(), None);
        store.put(&hash, PreviewSize::Low, b"one").await.unwrap();
        store.put(&hash, PreviewSize::Low, b"two").await.unwrap();
        assert_eq!(
            store.get(&hash, PreviewSize::Low).await.unwrap().as_deref(),
            Some(&b"two"[..])
        );
        let names: Vec<_> = std::fs::read_dir(dir.join(&hash))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["low.png".to_string()]);
        assert!(store.put("../x", PreviewSize::Low, b"x").await.is_err());
        assert_eq!(store.get("../x", PreviewSize::Low).await.unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
