#pragma once

#include <QByteArray>
#include <QString>

namespace airlock::test {

// Hand-built frames for tests that must send what a normal socket refuses to: spoofed source
// addresses, foreign MACs, ARP, IPv6 from a guest. Big-endian wire order throughout.

/// The Internet checksum (RFC 1071) of `data`.
quint16 internetChecksum(const QByteArray &data);
/// "02:61:6c:00:00:05" → 6 bytes.
QByteArray macBytes(const QString &text);
/// Dotted-quad → 4 bytes (network order).
QByteArray ipv4Bytes(const QString &address);
/// An Ethernet II header: destination, source, EtherType.
QByteArray ethernetHeader(const QByteArray &destination, const QByteArray &source,
                          quint16 etherType);
/// An IPv4 packet (header checksum filled in, DF set, TTL 64) carrying `payload` of `protocol`.
QByteArray ipv4Packet(const QString &source, const QString &destination, quint8 protocol,
                      const QByteArray &payload);
/// An IPv4/UDP packet (UDP checksum 0 = none, RFC 768).
QByteArray udpPacket(const QString &source, const QString &destination, quint16 sourcePort,
                     quint16 destinationPort, const QByteArray &payload);
/// An IPv4/TCP SYN (RFC 9293) with a correct TCP checksum.
QByteArray tcpSynPacket(const QString &source, const QString &destination, quint16 sourcePort,
                        quint16 destinationPort);
/// An ARP packet (RFC 826) for Ethernet/IPv4; operation 1 request, 2 reply.
QByteArray arpPacket(quint16 operation, const QByteArray &senderMac, const QString &senderIp,
                     const QByteArray &targetMac, const QString &targetIp);

} // namespace airlock::test
