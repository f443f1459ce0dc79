"""An agent's conversations: where its session files are, its rewind, a conversation handed over from
another machine."""

from __future__ import annotations

from .identity import Identity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .base import Rewinder
    from .conversation import Adopted, Place, Transcript


class Transcripts(Identity):
    """The agent's session files, read and written only through its Place."""

    def transcript_folders(self, home: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The folders the agent keeps its session files in, as HOME and ENVIRON place them (the variables
        the agent itself honours). None: git-rewind never reads or writes a file of this agent's."""
        return ()

    def transcript_problem(self, transcript: Transcript) -> str | None:
        """Why TRANSCRIPT is not one of the agent's session files (None: it is)."""
        return f"git-rewind knows no session file of {self.name}"

    def transcripts(self, home: str | None = None, environ: Mapping[str, str] | None = None) -> Place:
        """The gate every read and write of this agent's session files goes through (conversation.Place)."""
        import os

        from .conversation import Place

        folders = self.transcript_folders(home or os.path.expanduser("~"), os.environ if environ is None else environ)
        return Place(self.name, self.transcript_noun, folders, self.transcript_problem, self.transcript_suffix)

    def recognises_transcript_path(self, path: str, environ: Mapping[str, str]) -> bool:
        """PATH is where this agent keeps session files (the hook records no other; the file is not read)."""
        import os

        from ..base.fsutil import within

        folders = self.transcript_folders(os.path.expanduser("~"), environ)
        return path.endswith(self.transcript_suffix) and within(path, folders) is not None

    def conversation(self) -> Rewinder | str:
        """The agent's conversation rewind, or the sentence that says why there is none."""
        return f"conversation rewind is not available for {self.name}"

    # a conversation handed over from another machine (handoff.py) -----------------------------------

    def handover_refusal(self) -> str | None:
        """Why a conversation of this agent cannot be handed over (None: it can)."""
        return f"handing over a conversation is not available for {self.name}"

    def session_of(self, transcript: Transcript) -> str | None:
        """The session id TRANSCRIPT records for itself."""
        return None

    def handover_files(self, session: str, root: str, place: Place, transcript: Transcript) -> tuple[str, list[str]]:
        """Where this agent keeps SESSION (whose content is TRANSCRIPT) for the project ROOT on this machine: the
        path a new file goes to, and the files that already hold SESSION (to be kept, never replaced)."""
        raise NotImplementedError

    def rehome(self, transcript: Transcript, root: str, new_session: str | None) -> bytes:
        """TRANSCRIPT as this agent keeps it for ROOT: the fields it keys the project by rewritten from the
        sender's to ROOT; with NEW_SESSION, under that session id."""
        raise NotImplementedError

    def new_session_id(self) -> str:
        """A fresh session id in the agent's own form."""
        import uuid

        return str(uuid.uuid4())

    def prepare_folder(self, path: str, root: str, place: Place) -> None:
        """What the agent needs beside a new file PATH before it finds it (Gemini: its project marker)."""

    def adopt_transcript(self, raw: bytes, session: str, root: str, home: str | None = None,
                         environ: Mapping[str, str] | None = None, write: bool = True) -> Adopted:
        """Put RAW, the transcript of SESSION as another machine pushed it, where this agent looks for it for the
        project ROOT (never where the sender kept it), its per-project fields rewritten. A file of the same
        session already here is never replaced: one that already holds RAW is used as it is, one RAW extends
        (nothing of it lost) is extended, any other stays and RAW goes in as a new session (forked).
        Every check comes first; WRITE false: only say where it would go. Every write goes through the Place."""
        from ..base.errors import RewindError
        from ..base.repo import check_session
        from .conversation import Adopted, Transcript

        refusal = self.handover_refusal()
        if refusal is not None:
            raise RewindError(refusal)
        check_session(session)
        place = self.transcripts(home, environ)
        incoming = Transcript(f"{self.transcript_noun} of session {session}", raw)
        problem = self.transcript_problem(incoming)
        if problem:
            raise RewindError(f"the handed-over {self.transcript_noun} is not one ({problem}); nothing was written")
        recorded = self.session_of(incoming)
        if recorded != session:
            raise RewindError(f"the handed-over {self.transcript_noun} is of session {recorded}, not {session}; "
                              "nothing was written")
        data = self.rehome(incoming, root, None)
        path, existing = self.handover_files(session, root, place, incoming)
        place.resolve(path)  # whatever the agent module computed, it is below the agent's own folders
        how = "written"
        for other in existing:
            current = place.load_if_present(other)
            if current is None:
                continue
            if current.data.startswith(data):
                return Adopted(current.path, session, "kept", data, place)
            if data.startswith(current.data):  # the same conversation, gone further there: nothing here is lost
                path, how = current.path, "extended"
                break
            how = "forked"
        if how == "forked":
            session = self.new_session_id()
            data = self.rehome(incoming, root, session)
            path, _ = self.handover_files(session, root, place, Transcript(incoming.path, data))
            place.resolve(path)
        if write:
            if how == "extended":
                place.write(path, data)
            else:
                self.prepare_folder(path, root, place)
                place.create(path, data)
        return Adopted(path, session, how, data, place)
