"""The non-compute catalog: op types that are never an fp or bp point, shared by both rules.

The recipe names six of them "such as" Const, VariableV2, IteratorV2, Identity, Reshape and Case;
this is the complete version, by category, so ``--explain`` can say why a node was skipped.
"""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Optional

CATALOG: Dict[str, FrozenSet[str]] = {
    "storage and variables": frozenset(
        """Const HostConst VariableV2 Variable VarHandleOp ReadVariableOp VarIsInitializedOp
        IsVariableInitialized Assign AssignAdd AssignSub AssignVariableOp AssignAddVariableOp
        AssignSubVariableOp DestroyResourceOp TemporaryVariable DestroyTemporaryVariable
        _VarHandlesOp _ReadVariablesOp Constant""".split()
    ),
    "type, shape and identity": frozenset(
        """Identity IdentityN Snapshot StopGradient PreventGradient Reshape Squeeze ExpandDims
        EnsureShape Shape ShapeN Size Rank BroadcastGradientArgs""".split()
    ),
    "control flow": frozenset(
        """NoOp ControlTrigger Case StatelessCase If StatelessIf While StatelessWhile Switch
        RefSwitch Merge RefMerge Enter RefEnter Exit RefExit NextIteration RefNextIteration LoopCond
        PartitionedCall StatefulPartitionedCall Assert Print PrintV2 NetOutput StreamSwitch
        StreamActive StreamMerge LabelSet LabelGoto LabelGotoEx LabelSwitchByIndex GeOp""".split()
    ),
    # A function body's inputs and outputs (graphs converted to functions, e.g. a GeOp's body on
    # Ascend): `_Arg` hands in what the caller passed, `_Retval` hands a result back.
    "function arguments and results": frozenset("_Arg _Retval _DeviceArg _DeviceRetval".split()),
    # tf.data optionals (Keras `steps_per_execution`): wrap, unwrap or test a value; no compute.
    "optionals": frozenset("OptionalFromValue OptionalGetValue OptionalHasValue OptionalNone".split()),
    "inputs": frozenset(
        """Placeholder PlaceholderV2 PlaceholderWithDefault Iterator IteratorV2 AnonymousIterator
        AnonymousIteratorV2 AnonymousIteratorV3 OneShotIterator MakeIterator IteratorGetNext
        IteratorGetNextSync IteratorGetNextAsOptional IteratorToStringHandle
        IteratorFromStringHandle IteratorFromStringHandleV2 MultiDeviceIterator
        MultiDeviceIteratorInit MultiDeviceIteratorGetNextFromShard DeleteIterator GetNext
        FIFOQueue FIFOQueueV2 RandomShuffleQueue RandomShuffleQueueV2 PaddingFIFOQueue
        PaddingFIFOQueueV2 PriorityQueue PriorityQueueV2 ReadFile MatchingFiles Data RefData
        AippData AnnData Stage Unstage StagePeek StageSize StageClear MapStage MapUnstage
        MapUnstageNoKey MapPeek MapSize MapClear OrderedMapStage OrderedMapUnstage
        OrderedMapUnstageNoKey OrderedMapPeek OrderedMapSize OrderedMapClear""".split()
    ),
    "summaries": frozenset("""MergeSummary WriteSummary""".split()),
    # Communication between replicas and devices: it moves data, it computes none of the model
    # (MirroredStrategy's collectives, NCCL, Horovod, Ascend's HCCL).
    "communication": frozenset(
        """CollectiveReduce CollectiveReduceV2 CollectiveReduceV3 CollectiveGather CollectiveGatherV2
        CollectiveBcastSend CollectiveBcastRecv CollectiveBcastSendV2 CollectiveBcastRecvV2
        CollectiveAllToAllV2 CollectiveAllToAllV3 CollectiveReduceScatterV2 CollectiveAssignGroupV2
        CollectiveInitializeCommunicator CollectivePermute NcclAllReduce NcclReduce NcclBroadcast
        _NcclReduceSend _NcclReduceRecv _NcclBroadcastSend _NcclBroadcastRecv HorovodAllreduce
        HorovodAllgather HorovodBroadcast HorovodAlltoall HorovodReducescatter HcomAllReduce
        HcomBroadcast HcomAllGather HcomReduceScatter HcomReduce HcomSend HcomReceive
        HcomAllToAllV _Send _Recv _HostSend _HostRecv Send Recv""".split()
    ),
    "save and restore": frozenset(
        """SaveV2 RestoreV2 Save Restore RestoreSlice SaveSlices MergeV2Checkpoints
        ShardedFilename ShardedFilespec""".split()
    ),
}

# Families matched by name shape: every *Dataset op, queue and reader op, and every summary op.
_PATTERNS = [
    ("inputs", re.compile(r"Dataset(V\d+)?$|^Queue|Reader(V2)?$|^Reader|Iterator")),
    ("summaries", re.compile(r"Summary")),
]

# Ops whose output is the same data in another view: data flows through them (dataflow rule).
PASS_THROUGH = frozenset(
    "Identity IdentityN Snapshot StopGradient PreventGradient Reshape Squeeze ExpandDims EnsureShape".split()
)
# Ops whose output describes a tensor (its shape, whether it is there), not its values: data does not
# flow through them.
METADATA = frozenset("Shape ShapeN Size Rank BroadcastGradientArgs OptionalHasValue".split())

# Where the training data enters the graph, in order of preference.
DATA_SOURCES = frozenset(
    """IteratorGetNext IteratorGetNextSync IteratorGetNextAsOptional GetNext
    MultiDeviceIteratorGetNextFromShard QueueDequeue QueueDequeueV2 QueueDequeueMany
    QueueDequeueManyV2 QueueDequeueUpTo QueueDequeueUpToV2 Unstage MapUnstage MapUnstageNoKey
    OrderedMapUnstage OrderedMapUnstageNoKey""".split()
)
# A staging area's put: the data that goes in is the batch of a later step (the step reads the
# area's Unstage), as data enqueued into another queue feeds a later stage of the pipeline.
STAGES = frozenset("Stage MapStage OrderedMapStage".split())
# Ops whose output is a trainable variable's value (or its handle), and ops that pass such a value
# on: where the data meets one of these, the model begins (see ``_fp``).
VARIABLES = frozenset(
    "VariableV2 Variable VarHandleOp _VarHandlesOp ReadVariableOp _ReadVariablesOp TemporaryVariable".split()
)
VARIABLE_PASS = frozenset(
    "Identity IdentityN Snapshot Enter RefEnter Switch RefSwitch Merge RefMerge Cast".split()
)
# Ops whose first input is a resource handle (a variable), whatever the other inputs carry.
RESOURCE_FIRST = frozenset(
    """ReadVariableOp ResourceGather ResourceGatherNd AssignVariableOp AssignAddVariableOp
    AssignSubVariableOp ResourceScatterAdd ResourceScatterUpdate""".split()
)
# Input preprocessing: a dtype conversion of the batch, or elementwise arithmetic of it with
# constants (``tf.image.convert_image_dtype``'s scaling, mean/std normalisation). Before the model's
# first op these are not the model (they stay alternatives).
PREPROCESSING = frozenset(
    "Cast Mul RealDiv Div Sub Add AddV2 Maximum Minimum ClipByValue Floor Round".split()
)
# Ops that call a library function (its name in attr ``f``).
CALLS = frozenset("PartitionedCall StatefulPartitionedCall".split())
# Ops whose first input is a lookup table's handle: their data is their keys (a StringLookup's
# table is no trained variable).
LOOKUPS = frozenset("LookupTableFind LookupTableFindV2 LookupTableSize LookupTableSizeV2".split())
# Graph inputs fed from outside (GE's Data nodes are TensorFlow's placeholders; a function body
# converted from a graph takes its inputs through `_Arg` nodes).
PLACEHOLDERS = frozenset(
    "Placeholder PlaceholderV2 PlaceholderWithDefault Data RefData AippData AnnData _Arg _DeviceArg".split()
)
# Ops that put data into a queue: a dequeue whose data reaches one feeds the input pipeline, not the model.
ENQUEUES = frozenset(
    "QueueEnqueue QueueEnqueueV2 QueueEnqueueMany QueueEnqueueManyV2".split()
)


class Catalog:
    """The catalog with a user's additions and removals (``--skip-op``/``--keep-op``)."""

    def __init__(self, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
        self.add = frozenset(add)
        self.remove = frozenset(remove)
        self._memo: Dict[str, Optional[str]] = {}

    def category(self, op: Optional[str]) -> Optional[str]:
        """The catalog category of ``op``, or ``None`` if it is a compute op."""
        if op is None:
            return "no op field"
        try:
            return self._memo[op]
        except KeyError:
            pass
        cat: Optional[str] = None
        if op in self.remove:
            cat = None
        elif op in self.add:
            cat = "added by --skip-op"
        else:
            for name, ops in CATALOG.items():
                if op in ops:
                    cat = name
                    break
            else:
                for name, rx in _PATTERNS:
                    if rx.search(op):
                        cat = name
                        break
        self._memo[op] = cat
        return cat


def catalog_table() -> str:
    """The catalog as text, for ``--help`` and the README."""
    rows = ["%s: %s" % (k, ", ".join(sorted(v))) for k, v in CATALOG.items()]
    rows.append("inputs (by name): *Dataset, *DatasetV2, Queue*, *Reader, Reader*, *Iterator*")
    rows.append("summaries (by name): *Summary*")
    return "\n".join(rows)


# A gradients scope: a path component `gradients`, `gradients_N` or `gradient_tape` anywhere in a
# name but its last part (a summary *named* `.../gradients` is not in one).
_GRAD_SCOPE = re.compile(r"^(?:gradients(?:_\d+)?|gradient_tape)$")


def in_gradients_scope(name: str) -> bool:
    if "gradient" not in name:  # (every such component holds it: most names are settled here)
        return False
    parts = name.split("/")
    return any(_GRAD_SCOPE.match(p) for p in parts[:-1])
