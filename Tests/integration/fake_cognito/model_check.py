"""Every request the fake receives, checked against botocore's model of its operation.

authctl writes its requests by hand (Swift Codable), so nothing but this checks that each fits
what the service accepts: required members, no unknown members, types, string lengths and number
ranges (botocore's own `ParamValidator`, the one boto3 runs before sending), plus enum values
(which ParamValidator leaves to the service). A violation is answered as the service answers a
request that does not fit its model, HTTP 400 with a "validation error detected" message, and
is kept in the request log (`modelViolation`), where the `_requests_fit_the_model` fixture in
conftest.py fails the test that caused it.

The model is botocore's cognito-idp service-2.json of the pinned version MODEL_VERSION (the one
with the 2026 operations: replicas, provisioned limits), installed by Tests/support/install-deps.sh
into MODEL_DIR without touching the botocore that boto3 and the AWS CLI use; the installed
botocore's model is the fallback when that is missing, and says so in every entry.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import botocore.loaders
from botocore.model import OperationNotFoundError
from botocore.model import ServiceModel, Shape
from botocore.validate import ParamValidator

MODEL_VERSION = "1.44.8"
MODEL_DIR = Path(os.environ.get("AUTHCTL_BOTOCORE_MODEL_DIR")
                 or Path.home() / ".cache" / "authctl-tests" / f"botocore-{MODEL_VERSION}")


@lru_cache(maxsize=1)
def model() -> tuple[ServiceModel, str]:
    """The cognito-idp model and where it came from."""
    data = MODEL_DIR / "botocore" / "data"
    if (data / "cognito-idp").is_dir():
        loader = botocore.loaders.Loader(extra_search_paths=[str(data)], include_default_search_paths=False)
        origin = f"botocore {MODEL_VERSION}"
    else:
        loader = botocore.loaders.Loader()
        origin = f"botocore {botocore.__version__} (installed; {MODEL_VERSION} missing: run install-deps.sh)"
    return ServiceModel(loader.load_service_model("cognito-idp", "service-2", "2016-04-18"), "cognito-idp"), origin


def _enum_errors(shape: Shape, value: Any, path: str) -> list[str]:
    """Enum members outside the model's values (ParamValidator does not check them)."""
    errors: list[str] = []
    if shape.type_name == "string" and getattr(shape, "enum", None) and isinstance(value, str) and value not in shape.enum:
        errors.append(f"Invalid value for {path or 'input'}: {value!r} is not one of {', '.join(shape.enum)}")
    elif shape.type_name == "structure" and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                errors += _enum_errors(member, value[name], f"{path}.{name}" if path else name)
    elif shape.type_name == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            errors += _enum_errors(shape.member, item, f"{path}[{index}]")
    elif shape.type_name == "map" and isinstance(value, dict):
        for key, item in value.items():
            errors += _enum_errors(shape.key, key, f"{path} key")
            errors += _enum_errors(shape.value, item, f"{path}.{key}")
    return errors


def violations(operation: str, body: dict[str, Any]) -> list[str]:
    """What in `body` does not fit `operation`'s input shape; [] when it fits."""
    service, _ = model()
    try:
        op = service.operation_model(operation)
    except OperationNotFoundError:
        return [f"{operation} is no operation of cognito-idp"]
    if op.input_shape is None:
        return [] if not body else [f"{operation} takes no input"]
    report = ParamValidator().validate(body, op.input_shape)
    errors = [line.strip() for line in report.generate_report().splitlines() if line.strip()] if report.has_errors() else []
    return errors + _enum_errors(op.input_shape, body, "")
