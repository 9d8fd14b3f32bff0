"""The node listings the offline policy reads from ARK's tool results: the typed results the tools return
(:class:`SearchInGraphResult`, :class:`SearchInNeighborhoodResult`), or the dicts a trajectory file holds, read
leniently into the same shape (files written before the result models may leave keys out)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..tools.search_in_graph import SearchInGraphResult
from ..tools.search_in_neighborhood import SearchInNeighborhoodResult


class ListedNode(BaseModel):
    """One listed node: its index and, for a neighbour, the relations centre→node and node→centre."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    index: int = -1
    out: list[str] = []
    in_: list[str] = Field(default=[], alias="in")


class Listing(BaseModel):
    """A search's listed nodes, in order, and (a neighbourhood's) total before the page."""

    model_config = ConfigDict(extra="ignore")

    results: list[ListedNode] = []
    total: int | None = None


def listing_of(result: object) -> Listing:
    """The listing of a tool's result; an empty one for a refusal, another tool's result or an unreadable dict."""
    if isinstance(result, SearchInGraphResult):
        return Listing(results=[ListedNode(index=hit.index) for hit in result.results])
    if isinstance(result, SearchInNeighborhoodResult):
        return Listing(results=[ListedNode(index=n.index, out=n.out, in_=n.in_) for n in result.results],
                       total=result.total)
    if isinstance(result, dict):
        try:
            return Listing.model_validate(result)
        except ValidationError:
            return Listing()
    return Listing()
