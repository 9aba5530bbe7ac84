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

/// A hidden name beside `path`: `.NAME.` and `suffix`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{suffix}"))
}

/// A temporary name beside `path`, unique to this process and call.
fn temp_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    beside(path, &format!("{}.{}.tmp", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
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
    /// but an operating-system crash may leave an empty or cut file; running the command
    /// again rebuilds it. Only for outputs a command makes from its arguments alone:
    /// `build-kernel`'s cubin, input image and manifest, where the syncs were most of the
    /// user's wait (4,096 instructions: 110-180 ms with them, 50-70 ms without, loaded).
    ///
    /// On Linux the old file is not removed but kept beside the new one as its spare
    /// (`.NAME.spare`), and the next build writes over the spare and swaps it into place
    /// (`renameat2`'s `RENAME_EXCHANGE`): the name always holds a whole file, and no build
    /// frees and allocates the file's blocks again. Freeing them is a wait on the disk
    /// where the file system discards freed blocks (ext4's `discard`: about 0.2 ms a MiB,
    /// 3.3 ms for a 17 MB input image), and replacing a file by a plain rename makes ext4
    /// (its default `auto_da_alloc`) write the new one back inside the rename. The spare
    /// doubles the outputs' disk use; it may be removed at any time. A spare with another
    /// link, or held by another build (a lock), is left alone. Elsewhere, or where the swap
    /// is refused, the old file is removed and the new one renamed into place (a kill in
    /// between leaves neither at the name).
    Regenerable,
}

/// A file written (and synced, per [`Durability`]) beside its final name, not yet in place:
/// [`Staged::commit`] renames it over the name; dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct Staged {
    tmp: Option<PathBuf>,
    path: PathBuf,
    durability: Durability,
    /// the spare written over (its lock, held until the commit), where one was
    spare: Option<File>,
}

impl Staged {
    /// Write `bytes` beside `path` and sync them (see [`write_atomic`]); `path` is untouched
    /// until [`Staged::commit`]. Files staged on several threads are written at once.
    pub fn new(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<Staged> {
        Staged::from_chunks(path, [bytes], durability)
    }

    /// [`Staged::new`] of the pieces of `chunks` joined, each written as it comes.
    pub fn from_chunks<B: AsRef<[u8]>>(path: &Path, chunks: impl IntoIterator<Item = B>, durability: Durability) -> io::Result<Staged> {
        let spare = if durability == Durability::Regenerable { open_spare(&spare_beside(path)) } else { None };
        let tmp = if spare.is_some() { spare_beside(path) } else { temp_beside(path) };
        let r = (|| {
            let mut f = match &spare {
                Some(f) => f.try_clone()?,
                None => no_follow(OpenOptions::new().write(true).create_new(true)).open(&tmp)?,
            };
            let mut len = 0u64;
            for c in chunks {
                f.write_all(c.as_ref())?;
                len += c.as_ref().len() as u64;
            }
            if spare.is_some() {
                // written over from its start: what lies past the new contents goes
                f.set_len(len)?;
            }
            match durability {
                Durability::Synced => f.sync_all(),
                Durability::Regenerable => Ok(()),
            }
        })();
        match r {
            Ok(()) => Ok(Staged { tmp: Some(tmp), path: path.to_path_buf(), durability, spare }),
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
    /// a [`Durability::Regenerable`] file's old one becomes the spare, see there).
    pub fn commit(mut self) -> io::Result<()> {
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        if self.durability == Durability::Regenerable {
            // a plain file at the name: swapped with the staged one, which then holds the old
            // contents, kept as the spare (the spare itself already has its name)
            if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_file()) && exchange(&tmp, &self.path).is_ok() {
                if self.spare.is_none() && rename_no_replace(&tmp, &spare_beside(&self.path)).is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
                return Ok(());
            }
            // a folder or a file that cannot go makes the rename below fail, as it would anyway
            let _ = std::fs::remove_file(&self.path);
        }
        std::fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// Where the spare of `path` lies (see [`Durability::Regenerable`]).
fn spare_beside(path: &Path) -> PathBuf {
    beside(path, "spare")
}

/// The spare at `p` open for writing over and locked against other builds, if it is a plain
/// file with no other link (not followed where it is a link) and still at `p` once locked.
#[cfg(target_os = "linux")]
fn open_spare(p: &Path) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let f = no_follow(OpenOptions::new().write(true)).open(p).ok()?;
    f.try_lock().ok()?;
    let (m, at) = (f.metadata().ok()?, std::fs::symlink_metadata(p).ok()?);
    (m.is_file() && m.nlink() == 1 && (m.dev(), m.ino()) == (at.dev(), at.ino())).then_some(f)
}

#[cfg(not(target_os = "linux"))]
fn open_spare(_: &Path) -> Option<File> {
    None
}

/// `renameat2` of `a` to `b` with `flags`.
#[cfg(target_os = "linux")]
fn renameat2(a: &Path, b: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput));
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two NUL-terminated paths that outlive the call
    match unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), flags) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Swap the files at `a` and `b`, atomically.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    return renameat2(a, b, libc::RENAME_EXCHANGE);
    #[cfg(not(target_os = "linux"))]
    Err(io::Error::new(io::ErrorKind::Unsupported, format!("swapping {} and {}", a.display(), b.display())))
}

/// Rename `a` to `b` unless `b` exists.
fn rename_no_replace(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    return renameat2(a, b, libc::RENAME_NOREPLACE);
    #[cfg(not(target_os = "linux"))]
    Err(io::Error::new(io::ErrorKind::Unsupported, format!("renaming {} to {}", a.display(), b.display())))
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

/// Take the folder's lock for as long as the returned handle lives; Err says that another
/// process holds it, or why it could not be taken. The lock is an OS lock (`flock`) on the
/// folder itself, not on a file in it: deleting or replacing a file cannot release it, and
/// a process that dies releases it by itself.
pub fn lock_dir(dir: &Path) -> Result<File, String> {
    let f = File::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !f.metadata().map_err(|e| format!("{}: {e}", dir.display()))?.is_dir() {
        return Err(format!("{}: not a folder", dir.display()));
    }
    lock_file(&f).map_err(|e| match e {
        None => format!("{}: another run is writing this folder (it holds the folder's lock); wait for it to finish or choose another --out", dir.display()),
        Some(e) => format!("{}: cannot lock: {e}", dir.display()),
    })?;
    Ok(f)
}

/// An exclusive OS lock (`flock`) on `f`, held until `f` is closed. Err(None): another
/// process holds it.
pub fn lock_file(f: &File) -> Result<(), Option<io::Error>> {
    match f.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(None),
        Err(std::fs::TryLockError::Error(e)) => Err(Some(e)),
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

    /// A rebuilt file's old version becomes the spare, which the next build writes over and
    /// swaps into place; a spare with another link, held by another build, or planted as a
    /// link is left alone, and one dropped uncommitted goes.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_rebuilt_file_keeps_its_old_version_as_the_spare_and_writes_over_it() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let (p, spare, keep) = (d.path().join("input.bin"), d.path().join(".input.bin.spare"), d.path().join("keep"));
        let put = |b: &[u8]| Staged::new(&p, b, Durability::Regenerable).unwrap().commit().unwrap();
        let read = |q: &Path| std::fs::read_to_string(q).unwrap();
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
            v.sort();
            v
        };
        put(b"first");
        assert_eq!(names(), ["input.bin"], "no old file, no spare");
        put(b"second, longer");
        assert_eq!((read(&p), read(&spare)), ("second, longer".into(), "first".into()));
        let ino = std::fs::metadata(&spare).unwrap().ino();
        put(b"third");
        assert_eq!((read(&p), read(&spare)), ("third".into(), "second, longer".into()), "written over the spare and cut");
        assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino, "the spare itself was swapped in");
        assert_eq!(names(), [".input.bin.spare", "input.bin"]);
        // another link to the spare: not written over
        std::fs::hard_link(&spare, &keep).unwrap();
        put(b"fourth");
        assert_eq!((read(&p), read(&spare), read(&keep)), ("fourth".into(), "second, longer".into(), "second, longer".into()));
        std::fs::remove_file(&keep).unwrap();
        // a spare another build holds: not written over
        let held = File::open(&spare).unwrap();
        held.lock().unwrap();
        put(b"fifth");
        assert_eq!((read(&p), read(&spare)), ("fifth".into(), "second, longer".into()));
        drop(held);
        assert_eq!(names(), [".input.bin.spare", "input.bin"], "no temporary left");
        // a link planted at the spare's name: never followed
        std::fs::remove_file(&spare).unwrap();
        std::fs::write(&keep, "precious").unwrap();
        std::os::unix::fs::symlink(&keep, &spare).unwrap();
        put(b"sixth");
        assert_eq!((read(&p), read(&keep)), ("sixth".into(), "precious".into()));
        assert!(std::fs::symlink_metadata(&spare).unwrap().file_type().is_symlink());
        std::fs::remove_file(&spare).unwrap();
        std::fs::remove_file(&keep).unwrap();
        // dropped uncommitted after writing over the spare: the spare goes, the name stays
        put(b"seventh");
        assert_eq!(read(&spare), "sixth");
        drop(Staged::new(&p, b"never", Durability::Regenerable).unwrap());
        assert_eq!(read(&p), "seventh");
        assert_eq!(names(), ["input.bin"]);
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
        // the lock is the folder's own: no file in it can be deleted to get past it
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        drop(first);
        lock_dir(d.path()).unwrap();
    }
}
