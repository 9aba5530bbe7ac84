//! Every file the tool writes goes through here, with three promises:
//!
//! - **never through a link**: a symbolic link planted where an output file goes is refused
//!   (appended files) or replaced by the file itself (rewritten files); nothing is ever
//!   written outside the folder the user named;
//! - **whole or not at all**: a rewritten file is written beside its final name, synced and
//!   renamed over it, so a full disk or a kill leaves the old file or the new one, never a
//!   cut one; a pair of files (a table and its document) is updated both or neither. Outputs
//!   a command rebuilds from its arguments alone may skip the sync ([`Durability`]): only an
//!   operating-system crash can then cut them;
//! - **one writer per folder**: [`lock_dir`] holds an advisory lock a second run is refused by.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
fn no_follow(o: &mut OpenOptions) -> &mut OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    o.custom_flags(libc::O_NOFOLLOW)
}

#[cfg(not(unix))]
fn no_follow(o: &mut OpenOptions) -> &mut OpenOptions {
    o
}

/// The error for `path`, saying plainly when it was a planted link.
fn named(path: &Path, e: io::Error) -> io::Error {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) || std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return io::Error::new(io::ErrorKind::InvalidInput, "is a symbolic link: refusing to write through it");
    }
    let _ = path;
    e
}

/// A temporary name beside `path`, unique to this process and call.
fn temp_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{}.tmp", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
}

/// Write `bytes` to a new temporary file beside `path` and sync it; the temporary's name.
fn stage(path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let tmp = temp_beside(path);
    let r = (|| {
        // create_new: O_EXCL never follows a link at the temporary name either
        let mut f = no_follow(OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    match r {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether a [`Staged`] file is synced to disk before it is renamed into place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Synced: even an operating-system crash or a power loss leaves the old file or the
    /// new one. Every result the tool records (journals, summaries, vectors, reports).
    Synced,
    /// Not synced: a failed write or a full disk still leaves the old file or the new one,
    /// but an operating-system crash may leave an empty or cut file, and a kill at commit
    /// may leave neither at the name (the old file is removed just before the new one is
    /// renamed into place); running the command again rebuilds it. Only for outputs a
    /// command makes from its arguments alone: `build-kernel`'s cubin, input image and
    /// manifest, where the syncs were most of the user's wait (4,096 instructions: 110-180
    /// ms with them, 50-70 ms without, loaded). The removal is there because ext4 (its
    /// default `auto_da_alloc`) starts writing a file back when it is renamed over another,
    /// inside the rename: rebuilding a kernel into the same folder took 38-46 ms against
    /// 22-26 ms into a new one (`build-kernel --count 4096`), and 22-32 ms with the removal.
    Regenerable,
}

/// A file written (and synced, per [`Durability`]) beside its final name, not yet in place:
/// [`Staged::commit`] renames it over the name; dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct Staged {
    tmp: Option<PathBuf>,
    path: PathBuf,
    durability: Durability,
}

impl Staged {
    /// Write `bytes` beside `path` and sync them (see [`write_atomic`]); `path` is untouched
    /// until [`Staged::commit`]. Files staged on several threads are written at once.
    pub fn new(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<Staged> {
        Staged::from_chunks(path, [bytes], durability)
    }

    /// [`Staged::new`] of the pieces of `chunks` joined, each written as it comes.
    pub fn from_chunks<B: AsRef<[u8]>>(path: &Path, chunks: impl IntoIterator<Item = B>, durability: Durability) -> io::Result<Staged> {
        let tmp = temp_beside(path);
        let r = (|| {
            let mut f = no_follow(OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
            for c in chunks {
                f.write_all(c.as_ref())?;
            }
            match durability {
                Durability::Synced => f.sync_all(),
                Durability::Regenerable => Ok(()),
            }
        })();
        match r {
            Ok(()) => Ok(Staged { tmp: Some(tmp), path: path.to_path_buf(), durability }),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// The final name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rename the staged file over its final name (a link there is replaced, not followed;
    /// a [`Durability::Regenerable`] file's old one is removed first, see there).
    pub fn commit(mut self) -> io::Result<()> {
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        if self.durability == Durability::Regenerable {
            // a folder or a file that cannot go makes the rename below fail, as it would anyway
            let _ = std::fs::remove_file(&self.path);
        }
        std::fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(t) = self.tmp.take() {
            let _ = std::fs::remove_file(t);
        }
    }
}

/// Replace `path` with `bytes`, whole or not at all; a link at `path` is replaced, not followed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = stage(path, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Replace every file of `files`, all or none: each is staged (written and synced) first,
/// and only when all are staged are they renamed into place. Should a rename fail, the
/// files already replaced get their old contents back.
pub fn write_all_or_none(files: &[(&Path, &[u8])]) -> io::Result<()> {
    let mut staged = Vec::new();
    for (p, b) in files {
        match stage(p, b) {
            Ok(t) => staged.push(t),
            Err(e) => {
                staged.iter().for_each(|t| {
                    let _ = std::fs::remove_file(t);
                });
                return Err(io::Error::new(e.kind(), format!("{}: {e}", p.display())));
            }
        }
    }
    let old: Vec<Option<Vec<u8>>> = files.iter().map(|(p, _)| std::fs::read(p).ok()).collect();
    for (i, ((p, _), t)) in files.iter().zip(&staged).enumerate() {
        if let Err(e) = std::fs::rename(t, p) {
            for t in &staged[i..] {
                let _ = std::fs::remove_file(t);
            }
            for ((q, _), o) in files[..i].iter().zip(&old) {
                match o {
                    Some(o) => {
                        let _ = write_atomic(q, o);
                    }
                    None => {
                        let _ = std::fs::remove_file(q);
                    }
                }
            }
            return Err(io::Error::new(e.kind(), format!("{}: {e}", p.display())));
        }
    }
    Ok(())
}

/// Open `path` for appending (created when missing), never through a link.
pub fn open_append(path: &Path) -> io::Result<File> {
    no_follow(OpenOptions::new().create(true).append(true)).open(path).map_err(|e| named(path, e))
}

/// Open an existing `path` for writing in place (to cut a torn tail), never through a link.
pub fn open_existing(path: &Path) -> io::Result<File> {
    no_follow(OpenOptions::new().write(true)).open(path).map_err(|e| named(path, e))
}

/// Create `path`, which must not exist (a link there counts as existing).
pub fn create_new(path: &Path) -> io::Result<File> {
    no_follow(OpenOptions::new().create_new(true).append(true)).open(path).map_err(|e| named(path, e))
}

/// Take the folder's lock (`DIR/.lock`) for as long as the returned file lives; Err says
/// that another process holds it, or why it could not be taken.
pub fn lock_dir(dir: &Path) -> Result<File, String> {
    let p = dir.join(".lock");
    let f = no_follow(OpenOptions::new().create(true).truncate(false).write(true)).open(&p).map_err(|e| format!("{}: {}", p.display(), named(&p, e)))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(format!("{}: another run is writing this folder (it holds {}); wait for it to finish or choose another --out", dir.display(), p.display()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: cannot lock: {e}", p.display())),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_staged_file_appears_on_commit_and_is_removed_when_dropped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("input.bin");
        std::fs::write(&p, "old").unwrap();
        let s = Staged::new(&p, b"new", Durability::Synced).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        s.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        drop(Staged::new(&p, b"newer", Durability::Regenerable).unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "the dropped stage left a temporary");
        Staged::from_chunks(&p, [b"ne".to_vec(), vec![], b"west".to_vec()], Durability::Regenerable).unwrap().commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"newest");
    }

    #[test]
    fn links_are_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::write(&outside, "precious").unwrap();
        let link = d.path().join("summary.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        // appending refuses
        let e = open_append(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(create_new(&link).is_err());
        // rewriting replaces the link itself
        write_atomic(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn a_pair_is_written_both_or_neither() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.json"), d.path().join("sub/b.md"));
        std::fs::write(&a, "old a").unwrap();
        // b's folder is missing: b cannot be staged, so a keeps its old contents
        assert!(write_all_or_none(&[(&a, b"new a"), (&b, b"new b")]).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary left behind");
        std::fs::create_dir(d.path().join("sub")).unwrap();
        write_all_or_none(&[(&a, b"new a"), (&b, b"new b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let first = lock_dir(d.path()).unwrap();
        let e = lock_dir(d.path()).unwrap_err();
        assert!(e.contains("another run"), "{e}");
        drop(first);
        lock_dir(d.path()).unwrap();
    }
}
