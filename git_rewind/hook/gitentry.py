"""The file git's hooks that `install --git-hooks` writes run: `<python> -I -S <this file> NAME ARGS…` (NAME:
post-commit, post-rewrite or prepare-commit-msg). As hook/entry.py for the agents' hooks: it puts the
package's parent on the path and hands the call on (githook.py), and stays this small."""

if __name__ == "__main__":
    import sys

    try:
        sys.path.insert(0, __file__.rsplit("/", 3)[0])  # …/git_rewind/hook/gitentry.py → …
        from git_rewind.hook.githook import main
    except BaseException as exc:  # noqa: BLE001 - a git hook never fails a commit, even a broken install
        sys.stderr.write(f"git-rewind: git hook skipped, {type(exc).__name__}: {exc}\n")
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
