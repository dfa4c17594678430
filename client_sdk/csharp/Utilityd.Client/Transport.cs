#if NET
using System;
using System.Net.Http;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Threading;

namespace Utilityd.Client
{
    /// <summary>The HTTP/2 handler of a replica's channel on .NET: keepalive
    /// pings, and TLS as <see cref="TlsOptions"/> says.</summary>
    internal static class Transport
    {
        public static HttpMessageHandler Handler(ClientOptions o, string host)
        {
            var handler = new SocketsHttpHandler
            {
                PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
                KeepAlivePingDelay = o.KeepaliveTime,
                KeepAlivePingTimeout = o.KeepaliveTimeout,
                KeepAlivePingPolicy = HttpKeepAlivePingPolicy.Always,
                EnableMultipleHttp2Connections = true,
                // Batches never wait for a connection (the attempt deadline
                // moves them); this bounds only a connection attempt, which
                // then backs off and tries again.
                ConnectTimeout = TimeSpan.FromSeconds(1),
            };
            if (o.Tls != null) handler.SslOptions = Ssl(o.Tls, host);
            return handler;
        }

        private static SslClientAuthenticationOptions Ssl(TlsOptions tls, string host)
        {
            var ssl = new SslClientAuthenticationOptions { TargetHost = tls.ServerName ?? host };
            if (tls.ClientCertificate != null)
            {
                ssl.ClientCertificates = new X509CertificateCollection { tls.ClientCertificate };
            }
            if (tls.RootCertificate != null)
            {
                var root = tls.RootCertificate;
                ssl.RemoteCertificateValidationCallback = (_, cert, _, errors) =>
                    Verify(root, cert, errors);
            }
            return ssl;
        }

        /// <summary>Accepts a replica's certificate when it chains to
        /// <paramref name="root"/> and names the host we asked for.</summary>
        private static bool Verify(X509Certificate2 root, X509Certificate? cert, SslPolicyErrors errors)
        {
            if (cert == null || (errors & (SslPolicyErrors.RemoteCertificateNameMismatch |
                                           SslPolicyErrors.RemoteCertificateNotAvailable)) != 0)
            {
                return false;
            }
            using var chain = new X509Chain();
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.Add(root);
            chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
            using var leaf = new X509Certificate2(cert);
            return chain.Build(leaf);
        }
    }
}
#endif
