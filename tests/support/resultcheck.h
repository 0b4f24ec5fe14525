#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QTest>

#include <expected>
#include <type_traits>

namespace airlock::test {

/// "kind: message" of a failed Result (the Error's errorKindName() and text), for a test's
/// failure message; empty when it holds a value. Error types that convert with toError()
/// (HostnameError) are shown the same way.
template<typename T, typename E>
QByteArray resultProblem(const std::expected<T, E> &result)
{
    if (result)
        return {};
    Error error;
    if constexpr (std::is_same_v<E, Error>)
        error = result.error();
    else
        error = result.error().toError();
    return (errorKindName(error.kind) + QStringLiteral(": ") + error.message).toLocal8Bit();
}

} // namespace airlock::test

/// QVERIFY on a Result<T> (core/model/error.h) or another std::expected whose error has toError():
/// passes when it holds a value, fails printing the expression and the Error's kind and message
/// otherwise. Evaluates `expression` once.
#define QVERIFY_RESULT(expression)                                                                 \
    do {                                                                                           \
        const auto &airlockResult_ = (expression);                                                 \
        if (!QTest::qVerify(airlockResult_.has_value(), #expression,                               \
                            airlock::test::resultProblem(airlockResult_).constData(), __FILE__,    \
                            __LINE__))                                                             \
            return;                                                                                \
    } while (false)
