"""What the test files share (as pre-commit's `testing/`): no test file imports conftest or another test file.

- workdir: a real repository in a temporary directory and the real `git rewind` run on it.
- samples: recorded agent hook payloads.
- session: an agent session played against `git rewind hook`, and what it leaves behind.
- agentcli: the real agent CLIs for the end-to-end tests (`python -m helpers.agentcli` installs them).
- mockmodel (+ mockmodel_gemini, mockmodel_responses): a scripted mock of the model APIs.
- browser: the real `git rewind web` on a test repository, and Debian's Chromium to look at it.
- gitservers: real git servers on 127.0.0.1 (git daemon, http-backend behind lighttpd, sshd) and their fixtures.
- procs: the processes running on this machine, read from /proc.
- needs: what some tests need beyond git and Python (servers, the browser, man, npm, strace), skipped without it
  saying the command that installs it (a failure under CI=true).
"""
