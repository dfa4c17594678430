using System;
using System.Collections.Generic;
using Google.Protobuf;
using Google.Protobuf.Collections;
using Grpc.Core;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>
    /// One block's input as the caller's own arrays (an ECS chunk's
    /// components): rows = AgentIds.Length. Index spaces are the set's
    /// <see cref="Schema"/>: factors in Summary.Factors order, actions in
    /// Summary.Actions, personalities in Summary.Personalities, resources in
    /// Summary.Resources. An optional column left empty takes its default.
    /// Set the columns once to the chunk's arrays; <see cref="Blocks.Write"/>
    /// reads them each tick.
    /// </summary>
    public sealed class BlockColumns
    {
        /// <summary>The set deciding every row. Required.</summary>
        public string BehaviourSet { get; set; } = "";
        /// <summary>The revision the indexes come from; a block whose set has
        /// another is refused with FailedPrecondition. Empty: not checked.</summary>
        public string ExpectedRevision { get; set; } = "";
        /// <summary>The game's entity ids, one per row.</summary>
        public ReadOnlyMemory<ulong> AgentIds { get; set; }
        /// <summary>rows × factors: Rows layout, row r's factor f at
        /// r*factors+f; Columns layout, at f*rows+r (a chunk's component
        /// arrays).</summary>
        public ReadOnlyMemory<float> Factors { get; set; }
        /// <summary>How <see cref="Factors"/> is laid out.</summary>
        public FactorLayout Layout { get; set; }
        /// <summary>Each row's running action index, -1 for none. Empty: none runs.</summary>
        public ReadOnlyMemory<int> CurrentAction { get; set; }
        /// <summary>Seconds since each action last ended, rows × actions,
        /// row-major; NaN or +Inf: not recently. Empty: none ended recently.</summary>
        public ReadOnlyMemory<float> SecondsSinceAction { get; set; }
        /// <summary>Each row's seed. Empty: 0 for every row.</summary>
        public ReadOnlyMemory<ulong> Seeds { get; set; }
        /// <summary>Each row's personality index, -1 none. Empty: none.</summary>
        public ReadOnlyMemory<int> Personality { get; set; }
        /// <summary>Row r's targets are numbers TargetOffsets[r] to
        /// TargetOffsets[r+1] (rows + 1 offsets).</summary>
        public ReadOnlyMemory<uint> TargetOffsets { get; set; }
        /// <summary>Target factors, target after target.</summary>
        public ReadOnlyMemory<float> TargetFactors { get; set; }
        /// <summary>One id per target (empty: numbered within the row).</summary>
        public ReadOnlyMemory<ulong> TargetIds { get; set; }
        /// <summary>A number within the row's targets (-1 not given, -2 gone;
        /// empty: -1 each).</summary>
        public ReadOnlyMemory<int> CurrentTarget { get; set; }
        /// <summary>Rows explained at the request's level (answered in the
        /// block's Full).</summary>
        public ReadOnlyMemory<uint> ExplainRows { get; set; }
        /// <summary>Behaviour trees: the tick's game time.</summary>
        public double GameTime { get; set; }
        /// <summary>Each row's tree state (the last answer's columns,
        /// <see cref="Blocks.CarryTreeState"/>).</summary>
        public ReadOnlyMemory<uint> TreeStateOffsets { get; set; }
        /// <summary>See <see cref="TreeStateOffsets"/>.</summary>
        public ReadOnlyMemory<byte> TreeStates { get; set; }
        /// <summary>Each row's leaf outcomes: offsets, leaves, statuses.</summary>
        public ReadOnlyMemory<uint> OutcomeOffsets { get; set; }
        /// <summary>See <see cref="OutcomeOffsets"/>.</summary>
        public ReadOnlyMemory<int> OutcomeLeaves { get; set; }
        /// <summary>See <see cref="OutcomeOffsets"/>.</summary>
        public ReadOnlyMemory<NodeStatus> OutcomeStatuses { get; set; }
        /// <summary>Coordination: what each row holds (the last answer's
        /// grants, <see cref="Blocks.CarryHeld"/>).</summary>
        public ReadOnlyMemory<uint> HeldOffsets { get; set; }
        /// <summary>See <see cref="HeldOffsets"/>.</summary>
        public ReadOnlyMemory<uint> HeldResources { get; set; }
        /// <summary>See <see cref="HeldOffsets"/>.</summary>
        public ReadOnlyMemory<ulong> HeldTargetIds { get; set; }
        /// <summary>See <see cref="HeldOffsets"/>.</summary>
        public ReadOnlyMemory<uint> HeldAmounts { get; set; }
        /// <summary>Ask for the answer's indices in fixed-width columns
        /// (AgentBlock.FixedWidthIndices, docs/SERVICE.md "Blocks"): fewer
        /// instructions on the server for 6 more bytes a row.
        /// <see cref="Blocks.Read"/> reads either form.</summary>
        public bool FixedWidthIndices { get; set; }
    }

    /// <summary>Where one block's decisions go, each span sized for the
    /// block's rows; an empty span is not written.</summary>
    public ref struct BlockAnswers
    {
        /// <summary>Index in Summary.Actions; -1: not decided.</summary>
        public Span<int> ActionIndex;
        /// <summary>Number within the row's targets; -1: none.</summary>
        public Span<int> TargetIndex;
        /// <summary>The winning action's score.</summary>
        public Span<float> Score;
        /// <summary>Sums of <see cref="CompactFlag"/> values.</summary>
        public Span<byte> Flags;
    }

    /// <summary>A row that was not decided, and why.</summary>
    public readonly struct RowError
    {
        /// <summary>Makes one.</summary>
        public RowError(int row, UtilitydException error)
        {
            Row = row;
            Error = error;
        }

        /// <summary>The row.</summary>
        public int Row { get; }

        /// <summary>Why it was not decided.</summary>
        public UtilitydException Error { get; }
    }

    /// <summary>Blocks (docs/SERVICE.md, "Blocks"): agents as columns, from and
    /// into the caller's arrays.</summary>
    public static class Blocks
    {
        private static void Put<T>(RepeatedField<T> field, ReadOnlySpan<T> values)
        {
            // Clear keeps the field's array: a block message kept from tick
            // to tick allocates nothing once it has grown to the chunk's size.
            field.Clear();
            if (field.Capacity < values.Length) field.Capacity = values.Length;
            foreach (var v in values) field.Add(v);
        }

        /// <summary>
        /// Copies <paramref name="input"/> into <paramref name="output"/>,
        /// reusing its fields: a block kept from tick to tick allocates
        /// nothing per row (the tree states are wrapped, not copied: keep
        /// their array unchanged until the call returns).
        /// </summary>
        public static void Write(BlockColumns input, AgentBlock output)
        {
            output.BehaviourSet = input.BehaviourSet;
            output.ExpectedRevision = input.ExpectedRevision;
            output.Layout = input.Layout;
            Put(output.AgentIds, input.AgentIds.Span);
            Put(output.Factors, input.Factors.Span);
            Put(output.CurrentAction, input.CurrentAction.Span);
            Put(output.SecondsSinceAction, input.SecondsSinceAction.Span);
            Put(output.Seeds, input.Seeds.Span);
            Put(output.Personality, input.Personality.Span);
            Put(output.TargetOffsets, input.TargetOffsets.Span);
            Put(output.TargetFactors, input.TargetFactors.Span);
            Put(output.TargetIds, input.TargetIds.Span);
            Put(output.CurrentTarget, input.CurrentTarget.Span);
            Put(output.ExplainRows, input.ExplainRows.Span);
            output.GameTime = input.GameTime;
            Put(output.TreeStateOffsets, input.TreeStateOffsets.Span);
            output.TreeStates = input.TreeStates.IsEmpty ? ByteString.Empty : UnsafeByteOperations.UnsafeWrap(input.TreeStates);
            Put(output.OutcomeOffsets, input.OutcomeOffsets.Span);
            Put(output.OutcomeLeaves, input.OutcomeLeaves.Span);
            Put(output.OutcomeStatuses, input.OutcomeStatuses.Span);
            Put(output.HeldOffsets, input.HeldOffsets.Span);
            Put(output.HeldResources, input.HeldResources.Span);
            Put(output.HeldTargetIds, input.HeldTargetIds.Span);
            Put(output.HeldAmounts, input.HeldAmounts.Span);
            output.FixedWidthIndices = input.FixedWidthIndices;
        }

        /// <summary>Makes a tree block's answer state the next tick's input
        /// (the answer's bytes are used as they are, not copied).</summary>
        public static void CarryTreeState(DecisionBlock answer, BlockColumns next, CarryBuffers buffers)
        {
            buffers.TreeStateOffsets = Grow(buffers.TreeStateOffsets, answer.TreeStateOffsets.Count);
            answer.TreeStateOffsets.CopyTo(buffers.TreeStateOffsets, 0);
            next.TreeStateOffsets = new ReadOnlyMemory<uint>(buffers.TreeStateOffsets, 0, answer.TreeStateOffsets.Count);
            next.TreeStates = answer.TreeStates.Memory;
        }

        /// <summary>Makes what a coordinated block's answer granted each row
        /// what the row holds next tick, in <paramref name="held"/>'s arrays
        /// (grown when too small, then reused).</summary>
        public static void CarryHeld(DecisionBlock answer, BlockColumns next, CarryBuffers held)
        {
            held.HeldOffsets = Grow(held.HeldOffsets, answer.GrantOffsets.Count);
            held.HeldResources = Grow(held.HeldResources, answer.GrantResources.Count);
            held.HeldTargetIds = Grow(held.HeldTargetIds, answer.GrantTargetIds.Count);
            held.HeldAmounts = Grow(held.HeldAmounts, answer.GrantAmounts.Count);
            answer.GrantOffsets.CopyTo(held.HeldOffsets, 0);
            answer.GrantResources.CopyTo(held.HeldResources, 0);
            answer.GrantTargetIds.CopyTo(held.HeldTargetIds, 0);
            answer.GrantAmounts.CopyTo(held.HeldAmounts, 0);
            next.HeldOffsets = new ReadOnlyMemory<uint>(held.HeldOffsets, 0, answer.GrantOffsets.Count);
            next.HeldResources = new ReadOnlyMemory<uint>(held.HeldResources, 0, answer.GrantResources.Count);
            next.HeldTargetIds = new ReadOnlyMemory<ulong>(held.HeldTargetIds, 0, answer.GrantTargetIds.Count);
            next.HeldAmounts = new ReadOnlyMemory<uint>(held.HeldAmounts, 0, answer.GrantAmounts.Count);
        }

        private static T[] Grow<T>(T[] array, int n) => array.Length >= n ? array : new T[Math.Max(n, array.Length * 2)];

        private static void Copy<T>(RepeatedField<T> from, Span<T> to)
        {
            for (var i = 0; i < to.Length; i++) to[i] = from[i];
        }

        /// <summary>
        /// Copies the decisions of <paramref name="answer"/>, a block of
        /// <paramref name="rows"/> rows, into <paramref name="output"/> (its
        /// indices from the fixed-width columns or the varint ones, whichever
        /// the server answered in), and puts the rows that failed in
        /// <paramref name="errors"/> (cleared first). Throws the block's own error when the service refused it,
        /// and InvalidArgument when the answer does not have that many rows
        /// or a span of <paramref name="output"/> is not sized for it.
        /// </summary>
        public static void Read(DecisionBlock answer, int rows, BlockAnswers output, List<RowError> errors)
        {
            errors.Clear();
            if (answer.Error != null) throw UtilitydException.FromError(answer.Error);
            // The fixed-width index columns when the server answered in them
            // (the block asked), else the varint ones.
            var fixedWidth = answer.ActionIndexFixed.Count > 0 || answer.TargetIndexFixed.Count > 0;
            var actions = fixedWidth ? answer.ActionIndexFixed : answer.ActionIndex;
            var targets = fixedWidth ? answer.TargetIndexFixed : answer.TargetIndex;
            if (actions.Count != rows || targets.Count != rows || answer.Score.Count != rows ||
                answer.Flags.Length != rows)
            {
                throw new UtilitydException(StatusCode.InvalidArgument,
                    $"DecisionBlock: expected {rows} rows in every column, got {actions.Count} actions, " +
                    $"{targets.Count} targets, {answer.Score.Count} scores, {answer.Flags.Length} flags");
            }
            Check(output.ActionIndex.Length, rows, "ActionIndex");
            Check(output.TargetIndex.Length, rows, "TargetIndex");
            Check(output.Score.Length, rows, "Score");
            Check(output.Flags.Length, rows, "Flags");
            Copy(actions, output.ActionIndex);
            Copy(targets, output.TargetIndex);
            Copy(answer.Score, output.Score);
            if (!output.Flags.IsEmpty) answer.Flags.Span.CopyTo(output.Flags);
            for (var i = 0; i < answer.Full.Count; i++) // an index: RepeatedField's enumerator is an allocation
            {
                var x = answer.Full[i];
                if (x.Decision?.Error != null) errors.Add(new RowError((int)x.Agent, UtilitydException.FromError(x.Decision.Error)));
            }
        }

        private static void Check(int length, int rows, string name)
        {
            if (length != 0 && length != rows)
            {
                throw new UtilitydException(StatusCode.InvalidArgument,
                    $"BlockAnswers.{name}: sized for {length} rows, the block has {rows}", ErrorReason.Unspecified,
                    "BlockAnswers." + name);
            }
        }
    }

    /// <summary>Arrays a block's carried columns live in from one tick to
    /// the next (<see cref="Blocks.CarryTreeState"/>,
    /// <see cref="Blocks.CarryHeld"/>): one per block kept, grown to the
    /// chunk's size once, then reused.</summary>
    public sealed class CarryBuffers
    {
        internal uint[] TreeStateOffsets = Array.Empty<uint>();
        internal uint[] HeldOffsets = Array.Empty<uint>();
        internal uint[] HeldResources = Array.Empty<uint>();
        internal ulong[] HeldTargetIds = Array.Empty<ulong>();
        internal uint[] HeldAmounts = Array.Empty<uint>();
    }
}
