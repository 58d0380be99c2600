"""Airflow 3's task SDK names, with Airflow 2's as the fallback."""

try:  # Airflow 3
    from airflow.sdk import BaseHook, BaseOperator, BaseOperatorLink, BaseSensorOperator
except ImportError:  # Airflow 2
    from airflow.hooks.base import BaseHook  # type: ignore[no-redef]
    from airflow.models import BaseOperator, BaseOperatorLink  # type: ignore[no-redef]
    from airflow.sensors.base import BaseSensorOperator  # type: ignore[no-redef]

try:
    from airflow.sdk.execution_time.xcom import XCom
except ImportError:
    from airflow.models.xcom import XCom  # type: ignore[no-redef]

from airflow.exceptions import AirflowException
from airflow.triggers.base import BaseTrigger, TriggerEvent

__all__ = ["AirflowException", "BaseHook", "BaseOperator", "BaseOperatorLink",
           "BaseSensorOperator", "BaseTrigger", "TriggerEvent", "XCom"]
