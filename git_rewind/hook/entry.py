"""The file the installed hook command runs (user and local scope): `<python> -I -S <this file> hook --agent
NAME`. Without `site` nothing finds the package, so this puts its parent directory on the path itself,
then hands the call to the thin client (client.py). It stays this small: a script run by path is compiled
at every start (no .pyc), the modules it imports are not."""

if __name__ == "__main__":
    import sys

    try:
        sys.path.insert(0, __file__.rsplit("/", 3)[0])  # …/git_rewind/hook/entry.py → …
        from git_rewind.hook.client import main
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the agent, even a broken install
        sys.stderr.write(f"git-rewind: hook skipped, {type(exc).__name__}: {exc}\n")
        sys.exit(0)
    sys.exit(main(sys.argv[1:], end=True))
