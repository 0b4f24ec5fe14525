#pragma once

#include "core/model/egressreason.h"
#include "core/model/hostname.h"

#include <QCoreApplication>
#include <QString>

namespace airlock {

struct EgressEntry;

/// Translated sentences for policy problems and egress reasons. The model layer reports stable
/// reason names and English details; only the window turns them into the user's language.
class PolicyText final
{
    Q_DECLARE_TR_FUNCTIONS(PolicyText)
public:
    /// Why a host name or pattern was refused, in words, e.g. "An IP address cannot be allowed:
    /// name the host instead." for HostnameReason::IpLiteral.
    static QString hostProblem(HostnameReason reason);
    /// The problem with `pattern` as a rule host (canonicalHostPattern), or an empty string.
    /// A valid but non-canonical spelling is no problem: the rule stores the canonical form.
    static QString hostPatternProblem(const QString &pattern);
    /// The problem with a ports cell ("443, 8443"), or an empty string; `ports` receives the
    /// parsed list when valid.
    static QString portsProblem(const QString &text, QList<quint16> *ports = nullptr);
    /// The problem with a methods cell ("GET, HEAD"), or an empty string.
    static QString methodsProblem(const QStringList &methods);
    /// The problem with a path prefixes cell, or an empty string.
    static QString pathPrefixesProblem(const QStringList &prefixes);
    /// A translated egress reason, e.g. "Host not allowed" for EgressReason::HostNotAllowed.
    static QString reasonText(EgressReason reason);
    /// The same for a wire name ("host_not_allowed"); names not in the reason table (a newer
    /// gateway's) are returned as they are.
    static QString reasonText(const QString &reason);
    /// What a live egress event with `alert: true` means, naming `binding` (its description)
    /// and where the request went: a placeholder sent where the binding does not allow it
    /// (`credential_exfil`), a response that carried the secret (`scrubbed`), or any other
    /// alert with its reason. Names no value: an event never carries one, and this adds none
    /// (docs/credentials.md, "What is never logged").
    static QString credentialAlert(const EgressEntry &entry, const QString &binding);
};

/// Splits a cell's comma- or space-separated list ("GET, HEAD") into its items.
QStringList splitListCell(const QString &text);
/// Joins list items for a cell: "GET, HEAD".
QString joinListCell(const QStringList &items);

} // namespace airlock
