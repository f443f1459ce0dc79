"""`git rewind` as the daemon writes checkpoints: objects.in_process switched on, then the usual entry point.

Run by Workdir.rewind for a work tree whose `command` is workdir.IN_PROCESS, so that the differential,
real-history, kill and concurrency tests drive the in-process writer through the real commands.
"""

from git_rewind.base import objects
from git_rewind.main import main

objects.in_process(True)
main()
