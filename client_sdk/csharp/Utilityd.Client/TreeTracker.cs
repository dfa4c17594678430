using System;
using System.Collections.Generic;
using Google.Protobuf;
using Google.Protobuf.Collections;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>
    /// Keeps each agent's behaviour-tree state between ticks, so a game
    /// server only reports how its leaves went (docs/TREES.md):
    /// <code>
    /// trees.Prepare(snapshot);          // state and outcomes go in
    /// ... decide ...
    /// trees.Update(decision);           // the new state is kept
    /// trees.Report("guard-1", leaf, NodeStatus.Success);
    /// trees.Forget("guard-1");          // the agent despawned
    /// </code>
    /// Not thread-safe: one per match loop, or guard it.
    /// </summary>
    public sealed class TreeTracker
    {
        private readonly Dictionary<string, AgentTree> _agents = new Dictionary<string, AgentTree>(StringComparer.Ordinal);

        private sealed class AgentTree
        {
            public ByteString State = ByteString.Empty;
            public readonly List<TreeLeaf> Running = new List<TreeLeaf>();
            public readonly List<LeafOutcome> Outcomes = new List<LeafOutcome>();
        }

        private AgentTree Agent(string id)
        {
            if (!_agents.TryGetValue(id, out var a))
            {
                a = new AgentTree();
                _agents[id] = a;
            }
            return a;
        }

        /// <summary>Puts the agent's kept state and the outcomes reported
        /// since its last decision into its snapshot.</summary>
        public void Prepare(AgentSnapshot snapshot)
        {
            snapshot.LeafOutcomes.Clear();
            if (!_agents.TryGetValue(snapshot.AgentId, out var a))
            {
                snapshot.TreeState = ByteString.Empty;
                return;
            }
            snapshot.TreeState = a.State;
            foreach (var o in a.Outcomes) snapshot.LeafOutcomes.Add(o.Clone());
        }

        /// <summary>Keeps a decision's tree state and the leaves it runs; a
        /// decision with an error changes nothing (the agent keeps its last
        /// state).</summary>
        public void Update(Decision decision)
        {
            if (decision.Error != null) return;
            var a = Agent(decision.AgentId);
            a.State = decision.TreeState; // immutable: shared, not copied
            a.Running.Clear();
            a.Running.AddRange(decision.RunLeaves);
            a.Outcomes.Clear();
        }

        /// <summary>Records how a leaf the game runs went (the last report of
        /// a leaf wins).</summary>
        public void Report(string agentId, int leaf, NodeStatus status)
        {
            var a = Agent(agentId);
            foreach (var o in a.Outcomes)
            {
                if (o.Leaf == leaf)
                {
                    o.Status = status;
                    return;
                }
            }
            a.Outcomes.Add(new LeafOutcome { Leaf = leaf, Status = status });
        }

        /// <summary>The leaves the agent's last decision runs.</summary>
        public IReadOnlyList<TreeLeaf> Running(string agentId) =>
            _agents.TryGetValue(agentId, out var a) ? a.Running : (IReadOnlyList<TreeLeaf>)Array.Empty<TreeLeaf>();

        /// <summary>Drops an agent (it despawned).</summary>
        public void Forget(string agentId) => _agents.Remove(agentId);

        /// <summary>Agents kept.</summary>
        public int Count => _agents.Count;
    }

    /// <summary>Decision ids of a compact or block answer.</summary>
    public static class DecisionIds
    {
        /// <summary>Agent <paramref name="index"/>'s decision id in a batch
        /// numbered from <paramref name="first"/> (a compact answer's
        /// decision_id_base): SplitMix64's finaliser of first + index.</summary>
        public static ulong Id(ulong first, int index)
        {
            unchecked
            {
                var z = first + (ulong)index;
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
                return z ^ (z >> 31);
            }
        }

        /// <summary>An id as the full form and the decision log write it: 16
        /// lowercase hex digits.</summary>
        public static string Hex(ulong id) => id.ToString("x16");
    }
}
