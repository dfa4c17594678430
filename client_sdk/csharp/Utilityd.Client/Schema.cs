using System;
using System.Collections.Generic;
using System.Text;
using Google.Protobuf.Collections;
using Grpc.Core;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>The factor order of one revision of one behaviour set: the
    /// index spaces of packed factors and of block columns.</summary>
    public sealed class Schema
    {
        private readonly Dictionary<string, int> _factors;
        private readonly Dictionary<string, int> _targetFactors;
        private readonly Dictionary<string, int> _actions;
        private readonly Dictionary<string, int> _personalities;

        /// <summary>The schema of a set as GetBehaviourSet summarises it.</summary>
        public Schema(BehaviourSetSummary summary)
        {
            Summary = summary ?? throw new ArgumentNullException(nameof(summary));
            _factors = Index(summary.Factors);
            _targetFactors = Index(summary.TargetFactors);
            _actions = Index(summary.Actions);
            _personalities = Index(summary.Personalities);
        }

        /// <summary>The set's summary: its names in index order.</summary>
        public BehaviourSetSummary Summary { get; }

        /// <summary>The set revision the indexes belong to.</summary>
        public string Revision => Summary.Revision;

        private static Dictionary<string, int> Index(RepeatedField<string> names)
        {
            var m = new Dictionary<string, int>(names.Count, StringComparer.Ordinal);
            for (var i = 0; i < names.Count; i++) m[names[i]] = i;
            return m;
        }

        private static int Lookup(Dictionary<string, int> m, string name) => m.TryGetValue(name, out var i) ? i : -1;

        /// <summary>A factor's index, or -1.</summary>
        public int FactorIndex(string name) => Lookup(_factors, name);

        /// <summary>A target factor's index, or -1.</summary>
        public int TargetFactorIndex(string name) => Lookup(_targetFactors, name);

        /// <summary>An action's index (a block's action columns), or -1.</summary>
        public int ActionIndex(string name) => Lookup(_actions, name);

        /// <summary>A personality's index, or -1.</summary>
        public int PersonalityIndex(string name) => Lookup(_personalities, name);

        private static string Quote(string s)
        {
            var b = new StringBuilder(s.Length + 2).Append('"');
            foreach (var c in s)
            {
                if (c == '"' || c == '\\') b.Append('\\');
                b.Append(c);
            }
            return b.Append('"').ToString();
        }

        /// <summary>Orders named values by <paramref name="index"/>; throws
        /// naming what is wrong.</summary>
        private static float[] PackValues(MapField<string, float> named, Dictionary<string, int> index,
                                          RepeatedField<string> order, string where)
        {
            var values = new float[order.Count];
            var seen = new bool[order.Count];
            foreach (var kv in named)
            {
                if (!index.TryGetValue(kv.Key, out var i))
                {
                    throw new UtilitydException(StatusCode.InvalidArgument,
                        $"{where}named_factors: unknown factor {Quote(kv.Key)}", ErrorReason.UnknownFactor,
                        where + "named_factors");
                }
                values[i] = kv.Value;
                seen[i] = true;
            }
            List<string>? missing = null; // made only when something is missing
            for (var i = 0; i < seen.Length; i++)
            {
                if (!seen[i]) (missing ??= new List<string>()).Add(order[i]);
            }
            if (missing != null)
            {
                throw new UtilitydException(StatusCode.InvalidArgument,
                    $"{where}named_factors: missing {string.Join(", ", missing)}", ErrorReason.MissingFactor,
                    where + "named_factors");
            }
            return values;
        }

        /// <summary>
        /// Puts an agent's named factors (and its targets') into the set's
        /// order and stamps the revision. Throws a
        /// <see cref="UtilitydException"/> naming what is wrong, leaving the
        /// agent as it was.
        /// </summary>
        public void Pack(AgentSnapshot agent)
        {
            var named = agent.NamedFactors.Count > 0 && agent.Factors.Count == 0;
            float[]? values = named ? PackValues(agent.NamedFactors, _factors, Summary.Factors, "") : null;
            List<(int Target, float[] Values)>? targets = null;
            for (var t = 0; t < agent.Targets.Count; t++)
            {
                var target = agent.Targets[t];
                if (target.NamedFactors.Count == 0 || target.Factors.Count > 0) continue;
                var v = PackValues(target.NamedFactors, _targetFactors, Summary.TargetFactors, $"targets[{t}].");
                (targets ??= new List<(int, float[])>()).Add((t, v));
            }
            if (values == null && targets == null) return;
            if (values != null)
            {
                agent.Factors.Add(values);
                agent.NamedFactors.Clear();
            }
            if (targets != null)
            {
                foreach (var (t, v) in targets)
                {
                    agent.Targets[t].Factors.Add(v);
                    agent.Targets[t].NamedFactors.Clear();
                }
            }
            agent.ExpectedRevision = Revision;
        }
    }
}
