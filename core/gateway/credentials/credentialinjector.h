#pragma once

#include "core/gateway/credentials/streamreplacer.h"
#include "core/model/credentialbinding.h"
#include "core/model/secretvalue.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace airlock::gateway {

/// One binding as its gateway holds it: the rule, the guest-visible placeholder and the value
/// (shared, locked memory; never logged).
struct GatewayCredential
{
    qint64 binding = 0; ///< the helper's binding id, for counters in events
    QString secret; ///< the secret's name
    QString host; ///< canonical exact host
    QString pathPrefix; ///< empty: any path
    QStringList methods; ///< empty: any method
    CredentialPlacement placement;
    QByteArray placeholder; ///< "airlock-placeholder-..."
    std::shared_ptr<const SecretValue> value;
};

/// The gateway's credential decisions for one sandbox (issue 4; docs/redteam-cases.md principle 7
/// and class I). Pure: no I/O, no logging, nothing it returns holds a secret except inject()'s
/// head.
///
/// For each request that passed every other check (policy, framing, SNI = Host):
///  1. any form (credentialForms: raw, percent-encoded, base64/base64url) of any secret value in
///     the guest's head → Exfiltration (the guest must never hold a value; I4);
///  2. a placeholder form in the head (a placeholder is per sandbox and secret, so several
///     bindings of one secret share it):
///     - the request is an exact match for one of that placeholder's bindings (https, port 443,
///       canonical SNI = Host = binding host, path prefix and method) → Inject that binding;
///     - anything else (cleartext, other port, other host, other path or method) → Exfiltration
///       (`credential_exfil`, I1/I2), never an injection;
///  3. otherwise → Pass: nothing is injected into a request that does not carry a placeholder.
/// Request bodies are scanned with bodyScanner() (placeholders of bindings the request does not
/// match exactly, and every value form); responses of injected requests are scrubbed with
/// scrubRules() (I3).
class CredentialInjector final
{
public:
    /// What the gateway knows about one request when it decides.
    struct Request
    {
        bool tls = true;
        quint16 port = 443;
        QString sni; ///< canonical
        QString host; ///< canonical Host (equal to sni on a checked https request)
        QString method;
        QString target; ///< origin-form, "/path?query"
    };

    struct Verdict
    {
        enum class Kind {
            Pass, ///< forward unchanged
            Inject, ///< forward inject(head, credential)
            Exfiltration, ///< deny 403 `credential_exfil` and raise an alert
        };
        Kind kind = Kind::Pass;
        int credential = -1; ///< index into credentials() for Inject and placeholder matches
        /// Inject: every credential to inject, in order (credential is the first). Several
        /// secrets may go into one request (a key and a secret in two fields).
        QList<int> injections;
        QString detail; ///< English, names the binding and why, never a value
    };

    CredentialInjector() = default;
    /// A value that is not a valid HTTP field value (a control byte other than tab, RFC 9110
    /// §5.5; the vault refuses those already, docs/reviews/2026-11-30-redteam-pass.md#f5) is
    /// treated as unavailable: hasValue() is false and nothing is ever injected from it.
    explicit CredentialInjector(QList<GatewayCredential> credentials);
    /// The same, with `retired`: values the sandbox's bindings held before (rotated, or the
    /// binding removed) that an upstream may still hand back
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f7). They are scrub-only: their forms are
    /// scrubbed to their old placeholder and refused in requests like current values, but nothing
    /// is injected from them and their placeholders are not guarded.
    CredentialInjector(QList<GatewayCredential> credentials, QList<GatewayCredential> retired);
    CredentialInjector(CredentialInjector &&) noexcept = default;
    CredentialInjector &operator=(CredentialInjector &&) noexcept = default;

    const QList<GatewayCredential> &credentials() const { return m_credentials; }
    /// The scrub-only credentials (with a value each).
    const QList<GatewayCredential> &retired() const { return m_retired; }
    /// No credential and no retired value: the gateway has nothing to do for this sandbox.
    bool isEmpty() const { return m_credentials.isEmpty() && m_retired.isEmpty(); }
    /// True when credential `index` has a value that can be injected.
    bool hasValue(int index) const;
    /// True when any credential or retired value has a value (then responses are scrubbed and
    /// bodies scanned).
    bool hasValues() const { return m_arena.size() > 0; }

    /// True when `request` is exactly what credential `index` may be injected into.
    bool matches(int index, const Request &request) const;
    /// Decides on the request head the gateway is about to forward.
    Verdict inspect(const Request &request, QByteArrayView head) const;
    /// `head` with every field named like the placement's header removed and the placement's
    /// field (template with the value, or Basic) added last. `head` ends with CRLF CRLF.
    QByteArray inject(QByteArrayView head, int index) const;
    /// `head` (ending with CRLF CRLF) made for a response the gateway scrubs: every
    /// Accept-Encoding, Range and If-Range field removed and `Accept-Encoding: identity` added
    /// last, so the upstream neither compresses (a secret inside gzip matches no form) nor
    /// slices the body (a slice matches no form; docs/reviews/2026-12-01-credentials-redteam.md#f1
    /// and #f3). TE is hop-by-hop and never forwarded (HttpRequestGuard). docs/credentials.md.
    static QByteArray prepareForScrubbing(QByteArrayView head);
    /// A detector for the request body of `request`: it matches() whenever the body carries a
    /// value form or a placeholder form of a binding the request is not an exact match for.
    StreamReplacer bodyScanner(const Request &request) const;
    /// Rules that turn every form of credential `index`'s value (and of its Basic credentials)
    /// back into the placeholder, for the response to an injected request.
    QList<StreamReplacer::Rule> scrubRules(int index) const;
    /// scrubRules() of every credential and every retired value: what the gateway applies to
    /// every response while the sandbox has credentials (a secret may come back from any host
    /// that learned it).
    QList<StreamReplacer::Rule> allScrubRules() const;
    /// The credential a form (a pattern of bodyScanner or scrubRules) belongs to, or -1.
    int credentialOfForm(QByteArrayView form) const;
    /// The same patterns as scrubRules, for same-length masking beyond the scrub bound.
    QList<QByteArray> valuePatterns(int index) const;

private:
    /// The first credential with the same placeholder as `index`.
    int firstWithPlaceholder(int index) const;
    /// The first credential with the same placeholder as `index` that `request` matches
    /// exactly, or -1.
    int matchingWithPlaceholder(int index, const Request &request) const;

    QList<GatewayCredential> m_credentials;
    QList<QList<QByteArray>> m_placeholderForms;
    /// Value forms, and Basic "user:value" forms: QByteArray::fromRawData views into m_arena,
    /// so the encodings of a secret live in locked memory like the secret itself. Every
    /// StreamReplacer made from them must not outlive this injector (the gateway holds it in a
    /// shared_ptr for as long as a request or response uses it).
    QList<QList<QByteArray>> m_valueForms;
    QList<GatewayCredential> m_retired;
    QList<QList<QByteArray>> m_retiredForms; ///< views into m_arena, like m_valueForms
    SecretValue m_arena;
};

} // namespace airlock::gateway
