#include "core/gateway/credentials/credentialinjector.h"

#include "core/gateway/credentials/credentialpatterns.h"
#include "core/gateway/credentials/wipe.h"
#include "core/policy/policymatcher.h"

#include <openssl/crypto.h>

#include <cstring>

namespace airlock::gateway {

namespace {

bool containsAny(QByteArrayView haystack, const QList<QByteArray> &needles)
{
    for (const QByteArray &needle : needles) {
        if (haystack.contains(needle))
            return true;
    }
    return false;
}

QByteArray basicCredentials(const GatewayCredential &credential, QByteArrayView secret)
{
    // Reserved up front: no reallocation leaves a copy of the secret behind.
    const QByteArray user = credential.placement.username.toUtf8();
    QByteArray pair;
    pair.reserve(user.size() + 1 + secret.size());
    pair.append(user);
    pair.append(':');
    pair.append(secret);
    return pair;
}

QString describe(const GatewayCredential &credential)
{
    return QStringLiteral("binding %1 (secret %2 for https://%3%4)")
        .arg(credential.binding)
        .arg(credential.secret, credential.host, credential.pathPrefix);
}

bool isFieldValue(QByteArrayView value)
{
    for (const char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
            return false;
    }
    return !value.isEmpty();
}

QByteArray trimmedOws(const QByteArray &value)
{
    qsizetype first = 0;
    qsizetype last = value.size();
    while (first < last && (value.at(first) == ' ' || value.at(first) == '\t'))
        ++first;
    while (last > first && (value.at(last - 1) == ' ' || value.at(last - 1) == '\t'))
        --last;
    return value.sliced(first, last - first);
}

} // namespace

CredentialInjector::CredentialInjector(QList<GatewayCredential> credentials)
    : CredentialInjector(std::move(credentials), {})
{ }

CredentialInjector::CredentialInjector(QList<GatewayCredential> credentials,
                                       QList<GatewayCredential> retired)
    : m_credentials(std::move(credentials)), m_retired(std::move(retired))
{
    // The forms of one credential's value (and of its Basic pair, and of its OWS-trimmed
    // value); temporaries wiped.
    auto valueForms = [](GatewayCredential &credential) {
        QList<QByteArray> values;
        if (credential.value && !isFieldValue(credential.value->reveal()))
            credential.value.reset();
        if (!credential.value)
            return values;
        QByteArray raw = credential.value->reveal().toByteArray();
        values = credentialForms(raw);
        // A value stored before the vault refused surrounding whitespace: servers check (and
        // reflect) it trimmed (RFC 9110 §5.5; docs/reviews/2026-12-01-credentials-redteam.md#f4).
        QByteArray trimmed = trimmedOws(raw);
        if (trimmed.size() != raw.size())
            values += credentialForms(trimmed);
        wipe(trimmed);
        if (credential.placement.kind == CredentialPlacement::Kind::Basic) {
            QByteArray basic = basicCredentials(credential, raw);
            values += credentialForms(basic);
            wipe(basic);
        }
        wipe(raw);
        return values;
    };
    QList<QList<QByteArray>> forms;
    qsizetype total = 0;
    for (GatewayCredential &credential : m_credentials) {
        m_placeholderForms.append(credentialForms(credential.placeholder));
        forms.append(valueForms(credential));
    }
    for (GatewayCredential &credential : m_retired)
        forms.append(valueForms(credential));
    m_retired.removeIf([](const GatewayCredential &credential) { return !credential.value; });
    forms.removeIf([&, index = qsizetype(0)](const QList<QByteArray> &values) mutable {
        // Retired entries without a usable value are gone from m_retired: drop their (empty)
        // form lists too, keeping the lists index-aligned.
        const bool retiredEntry = index++ >= m_credentials.size();
        return retiredEntry && values.isEmpty();
    });
    for (const QList<QByteArray> &values : std::as_const(forms)) {
        for (const QByteArray &form : values)
            total += form.size();
    }
    // Every form into one locked buffer; the lists hold views of it.
    m_arena = SecretValue::allocate(total);
    qsizetype offset = 0;
    for (qsizetype i = 0; i < forms.size(); ++i) {
        QList<QByteArray> views;
        for (QByteArray &form : forms[i]) {
            char *at = m_arena.writableBytes() + offset;
            std::memcpy(at, form.constData(), std::size_t(form.size()));
            views.append(QByteArray::fromRawData(at, form.size()));
            offset += form.size();
            wipe(form);
        }
        if (i < m_credentials.size())
            m_valueForms.append(views);
        else
            m_retiredForms.append(views);
    }
}

bool CredentialInjector::hasValue(int index) const
{
    return index >= 0 && index < m_credentials.size() && m_credentials.at(index).value
        && !m_credentials.at(index).value->isEmpty();
}

bool CredentialInjector::matches(int index, const Request &request) const
{
    if (index < 0 || index >= m_credentials.size())
        return false;
    const GatewayCredential &credential = m_credentials.at(index);
    if (!request.tls || request.port != 443 || request.sni != credential.host
        || request.host != credential.host)
        return false;
    if (!credential.methods.isEmpty() && !credential.methods.contains(request.method))
        return false;
    if (!credential.pathPrefix.isEmpty()) {
        const qsizetype query = request.target.indexOf(QLatin1Char('?'));
        const QString path = query < 0 ? request.target : request.target.left(query);
        if (!policy::PolicyMatcher::pathMatches(credential.pathPrefix, path))
            return false;
    }
    return true;
}

CredentialInjector::Verdict CredentialInjector::inspect(const Request &request,
                                                        QByteArrayView head) const
{
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        if (containsAny(head, m_valueForms.at(i)))
            return {Verdict::Kind::Exfiltration,
                    int(i),
                    {},
                    QStringLiteral("the request carries the value of %1, which the guest must "
                                   "never hold")
                        .arg(describe(m_credentials.at(i)))};
    }
    for (qsizetype i = 0; i < m_retired.size(); ++i) {
        if (containsAny(head, m_retiredForms.at(i)))
            return {Verdict::Kind::Exfiltration,
                    -1,
                    {},
                    QStringLiteral("the request carries a former value of binding %1 (secret "
                                   "%2), which the guest must never hold")
                        .arg(m_retired.at(i).binding)
                        .arg(m_retired.at(i).secret)};
    }
    Verdict verdict;
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        if (!containsAny(head, m_placeholderForms.at(i)))
            continue;
        // Decided once per placeholder, by its first binding: any binding sharing it may match.
        if (firstWithPlaceholder(int(i)) != int(i))
            continue;
        const int match = matchingWithPlaceholder(int(i), request);
        if (match < 0)
            return {Verdict::Kind::Exfiltration,
                    int(i),
                    {},
                    QStringLiteral("the placeholder of %1 was sent to %2://%3:%4 %5 %6, which the "
                                   "binding does not cover")
                        .arg(describe(m_credentials.at(i)),
                             request.tls ? QStringLiteral("https") : QStringLiteral("http"),
                             request.host)
                        .arg(request.port)
                        .arg(request.method, request.target.section(QLatin1Char('?'), 0, 0))};
        if (verdict.kind == Verdict::Kind::Pass) {
            verdict.kind = Verdict::Kind::Inject;
            verdict.credential = match;
            verdict.detail = QStringLiteral("injected %1").arg(describe(m_credentials.at(match)));
        }
        verdict.injections.append(match);
    }
    return verdict;
}

int CredentialInjector::firstWithPlaceholder(int index) const
{
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        if (m_credentials.at(i).placeholder == m_credentials.at(index).placeholder)
            return int(i);
    }
    return index;
}

int CredentialInjector::matchingWithPlaceholder(int index, const Request &request) const
{
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        if (m_credentials.at(i).placeholder == m_credentials.at(index).placeholder
            && matches(int(i), request))
            return int(i);
    }
    return -1;
}

QByteArray CredentialInjector::inject(QByteArrayView head, int index) const
{
    const GatewayCredential &credential = m_credentials.at(index);
    const bool basic = credential.placement.kind == CredentialPlacement::Kind::Basic;
    const QByteArray field =
        basic ? QByteArrayLiteral("Authorization") : credential.placement.header.toLatin1();
    const QByteArray prefix = field.toLower() + ':';
    const QByteArrayView secret = credential.value ? credential.value->reveal() : QByteArrayView();
    QByteArray out;
    // Large enough for the whole result, so no reallocation copies the secret around unwiped.
    out.reserve(head.size() + field.size() + credential.placement.valueTemplate.size()
                + credential.placement.username.size() + 2 * secret.size() + 64);
    qsizetype start = 0;
    bool firstLine = true;
    while (start < head.size()) {
        qsizetype end = head.indexOf(QByteArrayView("\r\n"), start);
        if (end < 0)
            end = head.size();
        const QByteArrayView line = head.sliced(start, end - start);
        const qsizetype next = std::min(end + 2, head.size());
        if (line.isEmpty()) {
            // The end of the head: the credential goes last.
            out.append(field);
            out.append(": ");
            if (basic) {
                QByteArray pair = basicCredentials(credential, secret);
                QByteArray encoded = pair.toBase64();
                out.append("Basic ");
                out.append(encoded);
                wipe(pair);
                wipe(encoded);
            } else {
                const QByteArray tmpl = credential.placement.valueTemplate.toLatin1();
                const qsizetype at = tmpl.indexOf("{secret}");
                out.append(tmpl.left(at));
                out.append(secret);
                out.append(tmpl.mid(at + 8));
            }
            out.append("\r\n\r\n");
            return out;
        }
        const bool drop = !firstLine && line.size() >= prefix.size()
            && line.first(prefix.size()).toByteArray().toLower() == prefix;
        if (!drop)
            out.append(head.sliced(start, next - start));
        firstLine = false;
        start = next;
    }
    return out;
}

QByteArray CredentialInjector::prepareForScrubbing(QByteArrayView head)
{
    static const QByteArrayView dropped[] = {"accept-encoding", "range", "if-range"};
    QByteArray out;
    out.reserve(head.size() + 32);
    qsizetype start = 0;
    bool firstLine = true;
    while (start < head.size()) {
        qsizetype end = head.indexOf(QByteArrayView("\r\n"), start);
        if (end < 0)
            end = head.size();
        const QByteArrayView line = head.sliced(start, end - start);
        const qsizetype next = std::min(end + 2, head.size());
        if (line.isEmpty()) {
            out.append("Accept-Encoding: identity\r\n\r\n");
            return out;
        }
        bool drop = false;
        if (!firstLine) {
            const qsizetype colon = line.indexOf(':');
            const QByteArray name = line.first(colon < 0 ? 0 : colon).toByteArray().toLower();
            for (const QByteArrayView candidate : dropped)
                drop = drop || name == candidate;
        }
        if (!drop)
            out.append(head.sliced(start, next - start));
        firstLine = false;
        start = next;
    }
    return out;
}

StreamReplacer CredentialInjector::bodyScanner(const Request &request) const
{
    QList<StreamReplacer::Rule> rules;
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        for (const QByteArray &form : m_valueForms.at(i))
            rules.append({form, form});
        if (matchingWithPlaceholder(int(i), request) < 0) {
            for (const QByteArray &form : m_placeholderForms.at(i))
                rules.append({form, form});
        }
    }
    for (const QList<QByteArray> &forms : m_retiredForms) {
        for (const QByteArray &form : forms)
            rules.append({form, form});
    }
    return StreamReplacer(rules);
}

QList<StreamReplacer::Rule> CredentialInjector::scrubRules(int index) const
{
    QList<StreamReplacer::Rule> rules;
    const GatewayCredential &credential = m_credentials.at(index);
    for (const QByteArray &form : m_valueForms.at(index))
        rules.append({form, credential.placeholder});
    return rules;
}

QList<StreamReplacer::Rule> CredentialInjector::allScrubRules() const
{
    QList<StreamReplacer::Rule> rules;
    for (qsizetype i = 0; i < m_credentials.size(); ++i)
        rules += scrubRules(int(i));
    for (qsizetype i = 0; i < m_retired.size(); ++i) {
        for (const QByteArray &form : m_retiredForms.at(i))
            rules.append({form, m_retired.at(i).placeholder});
    }
    return rules;
}

int CredentialInjector::credentialOfForm(QByteArrayView form) const
{
    for (qsizetype i = 0; i < m_credentials.size(); ++i) {
        for (const QByteArray &candidate : m_valueForms.at(i) + m_placeholderForms.at(i)) {
            if (QByteArrayView(candidate) == form)
                return int(i);
        }
    }
    return -1;
}

QList<QByteArray> CredentialInjector::valuePatterns(int index) const
{
    return m_valueForms.at(index);
}

} // namespace airlock::gateway
