"""The error of a scenario that cannot be simulated (alone in its module, so that the
command line can catch it without loading the rest of the scenario layer's names)."""

from __future__ import annotations

from simkit.bounded import MAX_LISTED


class ScenarioError(ValueError):
    """A scenario (or a change to one) that cannot be simulated.

    ``problems`` lists (path, message) pairs; the message names the file and every
    field that is wrong.  ``str()`` is one line for one problem, and for several a
    first line ``FILE: N problems`` followed by one indented line per problem (at most
    ``bounded.MAX_LISTED``, then ``... and N more``).
    """

    def __init__(self, message: str, problems: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems

    @classmethod
    def of(cls, source: str, problems: list[tuple[str, str]]) -> ScenarioError:
        if len(problems) == 1:
            path, message = problems[0]
            return cls(
                f"{source}: {path}: {message}" if path else f"{source}: {message}", tuple(problems)
            )
        lines = [f"{source}: {len(problems):,} problems"]
        lines += [
            f"  {path}: {message}" if path else f"  {message}"
            for path, message in problems[:MAX_LISTED]
        ]
        if len(problems) > MAX_LISTED:
            lines.append(f"  ... and {len(problems) - MAX_LISTED:,} more")
        return cls("\n".join(lines), tuple(problems))
