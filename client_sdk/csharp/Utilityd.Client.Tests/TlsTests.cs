using System;
using System.IO;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;
using Grpc.Core;
using Xunit;
using static Utilityd.Client.Tests.Agents;

namespace Utilityd.Client.Tests
{
    public class TlsTests
    {
        /// <summary>A certificate signed by <paramref name="ca"/> (self-signed
        /// when null), written as PEM into <paramref name="dir"/>.</summary>
        private static readonly DateTimeOffset NotBefore = DateTimeOffset.UtcNow.AddHours(-1);
        private static readonly DateTimeOffset NotAfter = NotBefore.AddHours(2); // one for all: a child never outlives its CA

        private static X509Certificate2 Make(string dir, string name, X509Certificate2? ca, bool server)
        {
            using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            var req = new CertificateRequest("CN=" + name, key, HashAlgorithmName.SHA256);
            var notBefore = NotBefore;
            var notAfter = NotAfter;
            X509Certificate2 cert;
            if (ca == null)
            {
                req.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
                req.CertificateExtensions.Add(new X509KeyUsageExtension(
                    X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.DigitalSignature, true));
                cert = req.CreateSelfSigned(notBefore, notAfter);
            }
            else
            {
                req.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, true));
                var usage = new OidCollection { new Oid(server ? "1.3.6.1.5.5.7.3.1" : "1.3.6.1.5.5.7.3.2") };
                req.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usage, false));
                if (server)
                {
                    var san = new SubjectAlternativeNameBuilder();
                    san.AddIpAddress(IPAddress.Loopback);
                    req.CertificateExtensions.Add(san.Build());
                }
                var serial = BitConverter.GetBytes(DateTime.UtcNow.Ticks);
                using var signed = req.Create(ca, notBefore, notAfter, serial);
                cert = signed.CopyWithPrivateKey(key);
            }
            File.WriteAllText(Path.Combine(dir, name + ".pem"), cert.ExportCertificatePem());
            File.WriteAllText(Path.Combine(dir, name + ".key"), key.ExportPkcs8PrivateKeyPem());
            // Through PKCS#12, so the TLS stack can use its key.
            return X509CertificateLoader.LoadPkcs12(cert.Export(X509ContentType.Pkcs12), null);
        }

        /// <summary>Mutual TLS: a client with a certificate the server's CA
        /// signed decides; one without a certificate, or that does not trust
        /// the server, cannot.</summary>
        [Fact]
        public async Task MutualTls()
        {
            var dir = Directory.CreateTempSubdirectory("utilityd-tls").FullName;
            var ca = Make(dir, "ca", null, false);
            Make(dir, "server", ca, true);
            var client = Make(dir, "client", ca, false);
            using var server = new Server("--tls_cert=" + Path.Combine(dir, "server.pem"),
                                          "--tls_key=" + Path.Combine(dir, "server.key"),
                                          "--tls_client_ca=" + Path.Combine(dir, "ca.pem"));
            async Task Decide(TlsOptions tls)
            {
                await using var c = UtilitydClient.Connect(new ClientOptions
                {
                    Target = server.Address, Tls = tls, Deadline = TimeSpan.FromSeconds(3),
                });
                var resp = await c.DecideAsync(Batch(Forager("f", 0.9f, 0)));
                Assert.Equal("eat", resp.Decisions[0].Action);
            }
            var rootOnly = X509CertificateLoader.LoadCertificate(ca.RawData);
            await Decide(new TlsOptions { RootCertificate = rootOnly, ClientCertificate = client });
            // Under TLS 1.3 the server refuses a missing client certificate
            // after the handshake: .NET reports that as Unavailable or, when
            // the request had started, Internal.
            var without = await Assert.ThrowsAsync<UtilitydException>(() => Decide(new TlsOptions { RootCertificate = rootOnly }));
            Assert.Contains(without.Code, new[] { StatusCode.Unavailable, StatusCode.Internal });
            await Assert.ThrowsAsync<UtilitydException>(() => Decide(new TlsOptions { ClientCertificate = client }));
            Directory.Delete(dir, true);
        }
    }
}
