//! The scratch server starts with a `PATH` that lacks the system folders
//! (`/usr/sbin`, `/sbin`, where `runuser` lives), as a user's often does:
//! the programs it runs are looked up there too. The only test of its
//! binary, since it changes `PATH` for the whole process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use deja_team::scratch::ScratchServer;

#[test]
fn the_scratch_server_starts_with_a_path_without_the_system_folders() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let user_path: Vec<_> = std::env::split_paths(&path)
        .filter(|d| !d.ends_with("sbin"))
        .collect();
    std::env::set_var("PATH", std::env::join_paths(user_path).unwrap());
    let server = ScratchServer::start(false).unwrap();
    assert_eq!(server.psql("postgres", "SELECT 1").unwrap().trim(), "1");
}
