"""Gate specs: a configured instance of a check kind (``gates/*.yaml``)."""

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class GateSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Kebab-case gate id.")
    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="The check kind that runs it.")
    version: int = Field(
        ge=1,
        description="Bump when the gate's meaning changes; old is stale. Edits to this file or "
        "to the contracts and load mappings its params name make old results stale anyway.",
    )
    title: str = ""
    description: str = ""
    applies_to: str = Field(default="", description="Row selector; empty = every row.")
    params: dict[str, JsonValue] = Field(default_factory=dict)
