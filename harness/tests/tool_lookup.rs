//! The NVIDIA tools are found where the project installed them (or where a variable says),
//! never in a `.tools` up the working folder's ancestors: a planted one must not run.

use crate::common;

use common::BIN;
use std::process::Command;

#[test]
fn a_tools_folder_planted_above_the_working_folder_is_not_run() {
    let d = std::env::temp_dir().join(format!("hmul2-planted-{}", std::process::id()));
    let bin = d.join(".tools").join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = d.join("planted-ran");
    let script = bin.join("nvdisasm");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\necho planted\n", marker.display())).unwrap();
    let mut perm = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&script, perm).unwrap();
    let work = d.join("a").join("b");
    std::fs::create_dir_all(&work).unwrap();
    let o = Command::new(BIN).args(["oracle", "--seed", "1", "--count", "20"]).current_dir(&work).env_remove("HMUL2_NVDISASM").output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!marker.exists(), "the planted nvdisasm ran: {text}");
    // the project's own (pinned) nvdisasm judged the words instead
    assert!(o.status.success() && text.contains("0 mismatches") && text.contains("V13.2"), "{text}");
    std::fs::remove_dir_all(&d).unwrap();
}
