//! Jar (zip) files, through the `zip` crate; the archive is opened once and read under a lock.

use super::{ClassPathError, ClassSource, Origin};
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub struct JarSource {
    path: Arc<Path>,
    archive: Mutex<zip::ZipArchive<std::fs::File>>,
}

impl JarSource {
    pub fn open(path: &Path) -> Result<Self, ClassPathError> {
        let file = std::fs::File::open(path).map_err(|source| ClassPathError::Io { path: path.into(), source })?;
        let archive = zip::ZipArchive::new(file)
            .map_err(|e| ClassPathError::BadJar { path: path.into(), reason: e.to_string() })?;
        Ok(JarSource { path: path.into(), archive: Mutex::new(archive) })
    }
}

impl ClassSource for JarSource {
    fn resource(&self, name: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        let mut archive = self.archive.lock().unwrap_or_else(|p| p.into_inner());
        let mut entry = match archive.by_name(name) {
            Ok(e) => e,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(ClassPathError::BadJar { path: self.path.to_path_buf(), reason: e.to_string() }),
        };
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| ClassPathError::BadJar { path: self.path.to_path_buf(), reason: format!("{name}: {e}") })?;
        Ok(Some((bytes, Origin::ClassPath(self.path.clone()))))
    }
    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}
