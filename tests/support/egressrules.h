#pragma once

#include "core/model/egresspolicy.h"

namespace airlock::test {

/// A policy rule for tests: `host` (exact or `*.suffix`), ports (default 443), optional methods
/// and path prefixes.
inline EgressRule rule(const QString &host, QList<quint16> ports = {443}, QStringList methods = {},
                       QStringList prefixes = {})
{
    EgressRule r;
    r.host = host;
    r.ports = std::move(ports);
    r.methods = std::move(methods);
    r.pathPrefixes = std::move(prefixes);
    return r;
}

} // namespace airlock::test
